"""The bad-input suite: stack files, command-line arguments, snapshot archives (wrong manifest,
tampered content, paths escaping the archive), site names, hosts and snapshot names with shell
or SQL metacharacters, and wrong or missing tokens.

Each case runs the real CLI (or the real reset server) and must end with one clear error that
names what was wrong, a non-zero exit, and no partial state: the snapshot folder is byte for
byte what it was, and no container, network or snapshot of the suite's instance exists
afterwards. More cases live beside the features they guard (test_bad_input.py,
test_bad_input_docker.py, test_stack.py, test_reset_delta.py, test_serve.py).
"""
from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from pathlib import Path

import pytest
import requests

from sitectl.engine import DockerEngine
from sitectl.ops.pool import Pool
from sitectl.server import make_server, serve
from sitectl.stack.target import resolve_target
from tests.conftest import invoke

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
INSTANCE = 8  # nothing else uses it; every case must leave it empty
EVIL = ["shop; rm -rf /", "$(touch /tmp/sitectl-pwned)", "`id`", "x' OR '1'='1", "x\"; DROP TABLE users; --",
        "a|b", "../../etc/passwd", "x\ny"]


@pytest.fixture
def clean(tmp_path, monkeypatch, engine):
    """A fresh snapshot folder; after the case: unchanged, and nothing of instance 8 exists."""
    snaps = tmp_path / "snapshots"
    snaps.mkdir()
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(snaps))
    monkeypatch.chdir(tmp_path)  # no ./sitectl.yaml of the checkout is read
    before = _tree(snaps)
    yield tmp_path
    assert _tree(snaps) == before, "the failed command changed the snapshot folder"
    assert not engine.containers({"sitectl.instance": str(INSTANCE)}), "the failed command left containers"
    assert not Path("/tmp/sitectl-pwned").exists(), "input reached a shell"


def _tree(p: Path) -> dict:
    return {str(f.relative_to(p)): f.read_bytes() for f in sorted(p.rglob("*")) if f.is_file()
            and not f.name.startswith("instance.lock")}


def cli(*args) -> tuple[int, dict, str]:
    r = invoke([*args, "--json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    try:
        data = json.loads(r.stdout) if r.stdout.strip() else {}
    except ValueError:
        data = {}
    return r.exit_code, data, r.output


def assert_error(code, data, out, exit_code, *words):
    assert code == exit_code, (code, out)
    msg = data.get("error", out)
    assert "Traceback" not in out, out
    for w in words:
        assert w in msg, (w, msg)


# -- stack files -----------------------------------------------------------------------------
def write_stack(tmp: Path, body: str, name: str = "stack.yaml") -> str:
    p = tmp / name
    p.write_text(body)
    return str(p)


SITE_OK = """\
  home:
    kind: homepage
    env_var: HOMEPAGE
    image: sitectl/mini-homepage:0.1
    container: home
    ports: ["24399:4399"]
    url: "{origin}"
"""

STACK_CASES = {
    "yaml syntax": ("name: x\nsites:\n  home: [unclosed\n", ["malformed YAML", ":4:1"]),
    "unknown field": ("name: x\nsites:\n" + SITE_OK + "    colour: red\n", ["home", "colour"]),
    "site name with shell metacharacters": ("name: x\nsites:\n" + SITE_OK.replace("  home:", '  "home;rm -rf /":'),
                                            ["site names are lower-case"]),
    "site name with SQL metacharacters": ("name: x\nsites:\n" + SITE_OK.replace("  home:", "  \"home' OR '1'='1\":"),
                                          ["site names are lower-case"]),
    "container name with a command substitution": ("name: x\nsites:\n" + SITE_OK.replace("container: home",
                                                   'container: "home$(id)"'), ["home", "container"]),
    "port out of range": ("name: x\nsites:\n" + SITE_OK.replace("24399:4399", "70000:4399"), ["home", "port"]),
    "trailing slash URL": ("name: x\nsites:\n" + SITE_OK.replace('"{origin}"', '"{origin}/"'), ["trailing slash"]),
    "unknown placeholder": ("name: x\nsites:\n" + SITE_OK.replace('"{origin}"', '"{origin}{nope}"'), ["nope"]),
    "env var name with a shell metacharacter": ("name: x\nsites:\n" + SITE_OK.replace("HOMEPAGE", "HOME;ID"),
                                                ["home", "env_var"]),
    "extends a missing file": ("extends: nowhere.yaml\nname: x\nsites: {}\n", ["extends", "not found"]),
    "not a mapping": ("- just\n- a list\n", ["mapping"]),
}


@pytest.mark.parametrize("case", list(STACK_CASES))
def test_bad_stack_file(clean, case):
    body, words = STACK_CASES[case]
    path = write_stack(clean, body)
    code, data, out = cli("up", "--stack", path, "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, path, *words)


def test_extends_loop(clean):
    a = write_stack(clean, "extends: b.yaml\n", "a.yaml")
    write_stack(clean, "extends: a.yaml\n", "b.yaml")
    code, data, out = cli("up", "--stack", a, "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, "loops back")


# -- command-line arguments ------------------------------------------------------------------
@pytest.mark.parametrize("name", EVIL)
def test_site_names_with_metacharacters(clean, name):
    code, data, out = cli("reset", name, "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, "unknown site")


@pytest.mark.parametrize("host", ["127.0.0.1; rm -rf /", "$(id).localhost", "127.0.0.1' OR 1=1 --", "x y", "a\nb"])
def test_hosts_with_metacharacters(clean, host):
    code, data, out = cli("up", "homepage", "--host", host, "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, "host")


@pytest.mark.parametrize("name", ["golden; DROP DATABASE magentodb", "../escape", "Golden", "a" * 40, "x'--", ""])
def test_snapshot_names_with_metacharacters(clean, name):
    code, data, out = cli("snapshot", "create", name, "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, "invalid snapshot name")


@pytest.mark.parametrize("value,words", [("-1", ["instance"]), ("22", ["instance", "21"]), ("abc", ["instance"])])
def test_instance_numbers(clean, value, words):
    code, data, out = cli("status", "--instance", value)
    assert_error(code, data, out, 2, *words)


def test_restore_of_an_unknown_snapshot_lists_the_known_ones(clean):
    code, data, out = cli("snapshot", "restore", "nosuch", "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, "no snapshot 'nosuch'", "snapshots: none")


# -- snapshot archives -----------------------------------------------------------------------
PAYLOAD = b"-- a pg_dump archive would be here\n"
REL = "payload/reddit/0-postgres.dump"


def manifest(**over) -> dict:
    m = {"format": 2, "name": "golden", "stack": "mini", "sitectl": "0",
         "sites": {"reddit": {"stores": {"postgres:postmill": {"fingerprint": {"table x": "1"}}}}},
         "payload": {REL: {"site": "reddit", "store": "postgres:postmill", "size": len(PAYLOAD),
                           "sha256": hashlib.sha256(PAYLOAD).hexdigest()}}}
    m.update(over)
    return m


def archive(tmp: Path, members: list[tuple], name: str = "a.tar.gz") -> str:
    """``members``: (name, bytes) regular files, or (name, None, linkname) symlinks."""
    p = tmp / name
    with tarfile.open(p, "w:gz") as tar:
        for m in members:
            info = tarfile.TarInfo(m[0])
            if m[1] is None:
                info.type, info.linkname = tarfile.SYMTYPE, m[2]
                tar.addfile(info)
            else:
                info.size = len(m[1])
                tar.addfile(info, io.BytesIO(m[1]))
    return str(p)


def good(**over) -> list[tuple]:
    return [("manifest.json", json.dumps(manifest(**over)).encode()), (REL, PAYLOAD)]


ARCHIVE_CASES = {
    "not an archive": (None, ["not a sitectl snapshot archive"]),
    "no manifest": ([(REL, PAYLOAD)], ["no manifest.json"]),
    "manifest not JSON": ([("manifest.json", b"{nope"), (REL, PAYLOAD)], ["not valid JSON"]),
    "wrong format": (good(format=1), ["archive format 1 is not 2"]),
    "other stack": (good(stack="webarena"), ["stack 'webarena'"]),
    "tampered payload": ([good()[0], (REL, PAYLOAD.replace(b"a pg", b"A pg"))], ["tampered or damaged"]),
    "payload size differs": ([good()[0], (REL, PAYLOAD + b"x")], ["tampered or damaged"]),
    "extra file": (good() + [("payload/reddit/1-extra.txt", b"x")], ["do not match its manifest"]),
    "missing payload file": ([good()[0]], ["do not match its manifest"]),
    "path escaping with ..": (good() + [("../../etc/cron.d/x", b"x")], ["not allowed"]),
    "absolute path": (good() + [("/etc/passwd", b"x")], ["not allowed"]),
    "symlink member": (good() + [("payload/reddit/1-link", None, "/etc/shadow")], ["not allowed"]),
    "site the stack lacks": (good(sites={"reddit' OR '1'='1": {"stores": {}}}), ["sites this stack lacks"]),
    "snapshot name with a shell metacharacter": (good(name="golden;rm -rf /"), ["invalid snapshot name"]),
    "payload filed under another site": (
        [("manifest.json", json.dumps(manifest(payload={REL: {**manifest()["payload"][REL], "site": "gitlab"}})).encode()),
         (REL, PAYLOAD)], ["wrong site"]),
}


@pytest.mark.parametrize("case", list(ARCHIVE_CASES))
def test_bad_archive_is_rejected_before_anything_changes(clean, case):
    members, words = ARCHIVE_CASES[case]
    if members is None:
        path = clean / "a.tar.gz"
        path.write_bytes(b"just bytes, not gzip")
        path = str(path)
    else:
        path = archive(clean, members)
    code, data, out = cli("snapshot", "import", path, "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, *words)


def test_an_archive_that_passes_every_check_still_needs_running_sites(clean):
    # The control case: the crafted archive itself is valid; only the missing container stops it.
    code, data, out = cli("snapshot", "import", archive(clean, good()), "--instance", str(INSTANCE))
    assert_error(code, data, out, 2, "site 'reddit'", "is not running", "sitectl up")


# -- tokens ----------------------------------------------------------------------------------
@pytest.fixture
def server(clean, engine):
    """The real reset server over instance 8 (no site runs there: nothing may be reset)."""
    log = io.StringIO()
    pool = Pool([resolve_target("mini", host="127.0.0.1", instance=INSTANCE)], DockerEngine(), sites={INSTANCE: ["reddit"]})
    srv = make_server(pool, "the-right-token-42", ("127.0.0.1", 0), log=log)
    th = threading.Thread(target=serve, args=(srv, 0.1), daemon=True)
    th.start()
    yield srv, pool, log
    srv.shutdown()
    th.join(10)


@pytest.mark.parametrize("how", [
    {"path": "/reset"},
    {"path": "/t/wrong-token/reset"},
    {"path": "/reset", "headers": {"Authorization": "Bearer the-right-token-4"}},
    {"path": "/reset", "headers": {"Authorization": "Basic dGhlLXJpZ2h0LXRva2VuLTQy"}},
    {"path": "/t/the-right-token-42'; DROP TABLE x; --/reset"},
    {"path": "/api/leases", "method": "POST"},
])
def test_wrong_or_missing_token(server, how):
    srv, pool, log = server
    r = requests.request(how.get("method", "GET"), f"{srv.public_base}{how['path']}",
                         headers=how.get("headers", {}), timeout=10)
    assert r.status_code == 401 and "token" in r.json()["error"], r.text
    assert pool.slot(INSTANCE).resets == 0  # nothing started
    assert "the-right-token-42" not in log.getvalue()
