"""``sitectl serve``: the reset server (BrowserGym's /reset and /status, a JSON API with
leases) over one host's instances. See docs/serve.md."""
from __future__ import annotations

from pathlib import Path

import click

from sitectl import server as srvmod
from sitectl.cli.common import monitor_options, read_or_make_token, target_options
from sitectl.engine import DockerEngine
from sitectl.errors import UsageError
from sitectl.ops.instances import parse_instances, running_instances, target_of
from sitectl.ops.pool import Pool
from sitectl.paths import state_dir
from sitectl.stack.target import Target


@click.command()
@click.option("--bind", default="127.0.0.1:7565", show_default=True,
              help="ADDRESS:PORT to listen on (loopback unless you give another address).")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File holding the token mutating requests need (created, mode 0600, if missing; "
                   "default: <snapshots dir>/serve-token).")
@click.option("--instances", "pool_spec", default=None,
              help="Instances the server resets and leases, e.g. 0,1-3 (default: --instance).")
@click.option("--reset-wait", type=click.FloatRange(0, 600), default=30.0, show_default=True,
              help="Seconds GET /reset waits for the reset to finish before answering 200.")
@click.option("--no-initial-reset", is_flag=True, help="Do not reset every instance when the server starts.")
@click.option("--public-url", default=None,
              help="Base URL clients reach the server at, for the reset URLs leases hand out (default: http://BIND).")
@monitor_options
@target_options
def serve(target: Target, as_json: bool, bind, token_file, pool_spec, reset_wait, no_initial_reset, public_url,
          log_format, private_metrics, probe_every):
    """Serve resets over HTTP: BrowserGym's /reset and /status, and a JSON API with leases.

    Mutating requests need the token (Authorization: Bearer, or a /t/<token>/ path prefix:
    WA_FULL_RESET=http://127.0.0.1:7565/t/$(cat TOKEN_FILE)). See docs/serve.md.
    """
    host, _, port = bind.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--bind {bind!r}: give ADDRESS:PORT, e.g. 127.0.0.1:7565")
    eng = DockerEngine()
    eng.ping()
    nums = parse_instances(pool_spec) if pool_spec else [target.instance]
    found = running_instances(eng)
    missing = [n for n in nums if n not in found]
    if missing:
        raise UsageError(f"instance(s) {', '.join(map(str, missing))} not up: run `sitectl up --instance N` first")
    targets = [target if n == target.instance else target_of(target, n, found[n]) for n in nums]
    token_path = token_file or state_dir() / "serve-token"
    token = read_or_make_token(token_path)
    # A plain reset restores the mutable sites each instance runs.
    running = {n: [s.name for s in t.stack.reset_sites() if t.container(s) in found[n]["containers"]]
               for n, t in zip(nums, targets)}
    pool = Pool(targets, eng, sites=running)
    try:
        srv = srvmod.make_server(pool, token, (host, int(port)), reset_wait, public_url=public_url,
                                 log_format=log_format, open_metrics=not private_metrics, probe_every=probe_every)
    except OSError as e:
        raise UsageError(f"--bind {bind}: {e.strerror or e}") from None
    if not no_initial_reset:
        for n in nums:
            pool.start_reset(n, reason="server start")
    base = srv.public_base
    srv.events.note("serve_started",
                    f"sitectl serve on {base} for instance(s) {', '.join(map(str, nums))}; token in {token_path}; "
                    f"status page {base}/t/$(cat {token_path})/, metrics {base}/metrics\n"
                    f"BrowserGym: WA_FULL_RESET={base}/t/$(cat {token_path})"
                    + (f"/i/<N> (instance N; the bare path is instance {nums[0]})" if len(nums) > 1 else ""))
    srvmod.serve(srv)
