"""A NeMo Gym sandbox provider whose sandboxes are leased instances of a sitectl reset server.

NeMo Gym (``pip install nemo-gym``, 0.4.0 and later, Python >= 3.12) runs its environments'
side effects in sandboxes it gets from a provider: ``nemo_gym.sandbox.Sandbox(provider, spec)``
calls the provider's ``create``, ``exec``, ``upload_file``, ``download_file``, ``status`` and
``close`` (the ``SandboxProvider`` protocol, ``nemo_gym/sandbox/providers/base.py``), and finds
a provider by name among the ``nemo_gym.sandbox_providers`` entry points
(``nemo_gym/sandbox/providers/registry.py``). sitectl publishes this class there as ``sitectl``,
so, with both installed::

    from nemo_gym.sandbox import Sandbox, SandboxSpec
    with Sandbox({"sitectl": {"url": "http://127.0.0.1:7565", "token_file": ".../serve-token"}},
                 SandboxSpec()) as box:
        box.start()
        urls = json.loads(box.exec("urls").stdout)        # the leased instance's sites
        ...                                                # the agent works on them
        box.exec("checkpoint save before_checkout")
        changed = json.loads(box.exec("diff").stdout)      # what the episode changed
    # stop: the lease is released and the server resets the instance for the next sandbox

A sandbox is one lease: ``create`` acquires an idle, golden instance (waiting up to the spec's
``ready_timeout_s`` for one), ``close`` releases it, healthy unless ``exec("unhealthy REASON")``
said otherwise, in which case the server marks the instance failed instead of resetting it.
There is no shell: ``exec`` runs sitectl's own operations on the lease (:data:`COMMANDS`,
docs/rl-adapters.md), each printing JSON, so nothing an agent writes reaches a shell, and the
sites' containers are not the sandbox's to write into (``upload_file`` refuses).

This module imports nothing of NeMo Gym's at import time: its handle, status and result types
are taken from ``nemo_gym.sandbox.providers`` when a method runs, so sitectl itself does not
depend on nemo-gym.
"""
from __future__ import annotations

import asyncio
import json
import os
import shlex
from pathlib import Path
from typing import Any

from sitectl.adapters.lease_client import HeldLease, LeaseClient
from sitectl.errors import LeaseError, SitectlError

#: What ``exec`` runs (one line each; docs/rl-adapters.md has the table).
COMMANDS = {
    "urls": "the leased instance's sites and base URLs",
    "env": "WebArena's environment variables for it (env browsergym: BrowserGym's)",
    "lease": "the lease as the server has it now (instance, expires_in, failovers)",
    "diff": "what the episode changed since golden (docs/diff.md's JSON)",
    "reset": "reset the instance to golden and wait",
    "checkpoint": "checkpoint save|restore|delete NAME, or checkpoint list (docs/checkpoints.md)",
    "unhealthy": "unhealthy [REASON]: release as failed instead of resetting, at close",
}
#: The files ``download_file`` gives: name -> what it holds (JSON).
DOWNLOADS = ("urls.json", "env.json", "diff.json")
#: ``exec`` return codes: done, the server refused or failed, bad command, timed out.
OK, REFUSED, USAGE, TIMED_OUT = 0, 1, 2, 124


def _types():
    from nemo_gym.sandbox import providers  # noqa: PLC0415 - nemo-gym is optional: imported when used

    return providers


class SitectlSandboxProvider:
    """NeMo Gym's ``SandboxProvider`` over a sitectl reset server's leases.

    Args:
        url: the reset server's base URL (``sitectl serve``, the pool ``sitectl cluster deploy`` runs).
        token: the server token; or ``token_file`` (or ``$SITECTL_TOKEN_FILE``).
        client: the holder's name on the server's status page (default ``nemo-gym``).
        ttl_s: seconds a heartbeat keeps a lease; heartbeats run while the sandbox lives.
        ready_timeout_s: seconds ``create`` waits for a free instance when the spec gives none.

    Raises:
        UsageError: no usable token, or a URL that is not http(s).
    """

    name = "sitectl"

    def __init__(self, url: str, token: str | None = None, token_file: str | None = None,
                 client: str = "nemo-gym", ttl_s: float = 120.0, ready_timeout_s: float = 600.0):
        self._leases = LeaseClient(url, token, token_file, client=client)
        self.ttl_s = float(ttl_s)
        self.ready_timeout_s = float(ready_timeout_s)

    async def create(self, spec) -> Any:
        """Lease an instance: returns a ``SandboxHandle`` whose ``sandbox_id`` is the lease's tag
        (``i<N>-<6 characters>``, safe to log) and whose ``raw`` is the :class:`HeldLease`.

        The spec's ``ttl_s`` bounds the sandbox's life (heartbeats stop then, and the server ends
        the lease at most ``ttl_s`` later); ``ready_timeout_s`` bounds the wait for a free
        instance. ``image``, ``entrypoint`` and ``workdir`` have no meaning here (the server's
        stack fixes the sites) and are refused, as are ``files`` (nothing is uploaded into the
        sites' containers).

        Raises:
            SandboxCreateError: a refused spec, no instance free in time, or the server refused.
        """
        p = _types()
        bad = [f for f in ("image", "entrypoint", "workdir") if getattr(spec, f)] + (["files"] if spec.files else [])
        if bad:
            raise p.SandboxCreateError(f"sitectl sandboxes take no {', '.join(bad)}: the reset server's stack "
                                       "fixes the sites (sitectl serve --stack), and nothing is uploaded into them")
        if spec.ttl_s is not None and spec.ttl_s <= 0:
            raise p.SandboxCreateError(f"ttl_s {spec.ttl_s}: give a positive number of seconds, or none")
        wait = self.ready_timeout_s if spec.ready_timeout_s is None else float(spec.ready_timeout_s)
        try:
            lease = await asyncio.to_thread(self._leases.acquire, self.ttl_s, wait, True, spec.ttl_s)
        except SitectlError as e:
            raise p.SandboxCreateError(str(e)) from None
        return p.SandboxHandle(sandbox_id=lease.tag, provider_name=self.name, raw=lease)

    async def exec(self, handle, command: str, *, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_s: int | float | None = None, user: str | int | None = None) -> Any:
        """Run one of :data:`COMMANDS` on the lease; its answer is JSON on stdout.

        Returns:
            ``SandboxExecResult``: return code 0 done, 1 the server refused or failed (its
            message on stderr), 2 not a command here (or ``cwd``, ``env`` or ``user`` given:
            there is no shell), 124 not done within ``timeout_s`` (the operation may still
            finish on the server).
        """
        p = _types()
        if cwd or env or user is not None:
            return p.SandboxExecResult("", "sitectl sandboxes run no shell: cwd, env and user have no meaning", USAGE)
        if timeout_s is not None and timeout_s <= 0:
            return p.SandboxExecResult("", f"timeout_s {timeout_s}: give a positive number of seconds", USAGE)
        try:
            argv = shlex.split(command)
        except ValueError as e:
            return p.SandboxExecResult("", f"cannot parse the command: {e}", USAGE)
        work = asyncio.to_thread(self._run, handle.raw, argv)
        try:
            out = await (asyncio.wait_for(work, timeout_s) if timeout_s else work)
        except asyncio.TimeoutError:
            return p.SandboxExecResult("", f"not done within {timeout_s} s", TIMED_OUT, error_type="timeout")
        except LeaseError as e:
            return p.SandboxExecResult("", str(e), REFUSED, error_type="lease_ended")
        except SitectlError as e:
            return p.SandboxExecResult("", str(e), USAGE if e.exit_code == 2 else REFUSED)
        if isinstance(out, str):  # a usage message
            return p.SandboxExecResult("", out, USAGE)
        return p.SandboxExecResult(json.dumps(out, sort_keys=True), "", OK)

    def _run(self, lease: HeldLease, argv: list[str]) -> Any:
        """The answer of ``argv`` (a JSON-able value), or a usage message (a str)."""
        c = self._leases
        head, rest = (argv[0], argv[1:]) if argv else ("", [])
        if head == "urls" and not rest:
            return lease.urls
        if head == "env" and rest in ([], ["webarena"], ["browsergym"]):
            return lease.browsergym_env if rest == ["browsergym"] else lease.env
        if head == "lease" and not rest:
            return c.info(lease)  # without the id, the holder's credential (lease_client.shown)
        if head == "diff" and not rest:
            return c.diff(lease)
        if head == "reset" and not rest:
            return {"state": c.reset(lease)}
        if head == "checkpoint" and (rest == ["list"] or (len(rest) == 2 and rest[0] in ("save", "restore", "delete"))):
            return c.checkpoint(lease, rest[0], rest[1] if len(rest) == 2 else None)
        if head == "unhealthy":
            lease.healthy, lease.reason = False, " ".join(rest) or "marked unhealthy by its sandbox"
            return {"healthy": False, "reason": lease.reason}
        said = shlex.join(argv)
        said = said if len(said) <= 120 else said[:117] + "..."
        return (f"not a command of a sitectl sandbox: {said!r}; there is no shell. Commands: "
                + "; ".join(f"{k}: {v}" for k, v in COMMANDS.items()))

    async def upload_file(self, handle, source_path: Path, target_path: str) -> None:
        """Refused: the sites' containers are not the sandbox's to write into (an agent changes
        the sites through their web pages).

        Raises:
            PermissionError: always.
        """
        raise PermissionError(f"sitectl sandboxes take no uploads ({target_path}): the agent changes the sites "
                              "through their pages")

    async def download_file(self, handle, source_path: str, target_path: Path) -> None:
        """Write one of :data:`DOWNLOADS` (``urls.json``, ``env.json``, ``diff.json``) to
        ``target_path`` (mode 0600).

        Raises:
            FileNotFoundError: any other name.
            ServerRefused: the diff could not be read (409 while the instance resets).
        """
        name = source_path.lstrip("/")
        if name not in DOWNLOADS:
            raise FileNotFoundError(f"a sitectl sandbox has {', '.join(DOWNLOADS)}, not {source_path!r}")
        lease: HeldLease = handle.raw
        if name == "diff.json":
            data = await asyncio.to_thread(self._leases.diff, lease)
        else:
            data = lease.urls if name == "urls.json" else lease.env
        target = Path(target_path)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2, sort_keys=True)

    async def status(self, handle) -> Any:
        """``running`` (leased, golden or mid-episode), ``starting`` (its reset runs),
        ``error`` (its last reset failed), ``stopped`` (the lease ended)."""
        p = _types()
        try:
            state = await asyncio.to_thread(self._leases.status, handle.raw)
        except LeaseError:
            return p.SandboxStatus.STOPPED
        except SitectlError:
            return p.SandboxStatus.UNKNOWN
        if state == "ready":
            return p.SandboxStatus.RUNNING
        return p.SandboxStatus.STARTING if state == "resetting" else p.SandboxStatus.ERROR

    async def close(self, handle) -> None:
        """Release the lease: healthy, the server resets the instance; after
        ``exec("unhealthy ...")``, it marks the instance failed with the reason. A lease that
        already ended (reaped after missed heartbeats) is no error."""
        try:
            await asyncio.to_thread(self._leases.release, handle.raw)
        except LeaseError:
            pass

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        self._leases.close()
