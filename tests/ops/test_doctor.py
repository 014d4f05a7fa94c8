"""`sitectl doctor` against real containers: the mini stack passes it; a stack file whose
stores assume what the container lacks (a client refused by the server, a command not on the
container's PATH, a missing `/run` marker) fails it with exit 12, each failure named with its
field and fix; and `up` of such a stack refuses golden with the same report, taking no
snapshot. Real Docker, real MariaDB and PostgreSQL."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitectl import snapshots
from sitectl.ops import doctor as doctor_ops
from sitectl.ops.doctor import PROBE_SH, _parse_probe
from sitectl.stack.target import resolve_target
from tests.conftest import SCRATCH_INSTANCE, cli

ROOT_DIR = Path(__file__).resolve().parents[2]


def _site(res: dict, name: str) -> dict:
    return next(r for r in res["sites"] if r["site"] == name)


def _check(site: dict, prefix: str) -> dict:
    return next(c for c in site["checks"] if c["check"].startswith(prefix))


def test_the_mini_stack_passes(mini):
    code, res = cli("doctor", "--json")
    assert code == 0 and res["ok"], json.dumps(res, indent=1)
    assert {r["site"] for r in res["sites"]} == set(mini.stack.sites)
    shop = _site(res, "shopping")
    assert shop["verdict"] in ("ok", "warn"), shop
    # BusyBox's find, as on the real Alpine image: the files store runs its python3 helper.
    assert shop["userland"]["python"] and shop["userland"]["gnu_find"] is False
    assert "python3 helper" in _check(shop, "userland")["detail"]
    assert shop["userland"]["files_way"].startswith("python /")  # recorded in the container
    assert "files_way" not in _site(res, "homepage")["userland"]  # no files store there
    assert _check(shop, "mysql magentodb")["level"] == "ok" and "MariaDB" in _check(shop, "mysql magentodb")["detail"]
    assert _check(shop, "marker /run/mysqld/.init")["level"] == "ok"
    forum = _site(res, "reddit")
    assert "PostgreSQL" in _check(forum, "postgres postmill")["detail"]
    assert _check(forum, "marker /run/postgresql/.init")["level"] == "ok"
    assert _check(_site(res, "gitlab"), "redis db 0")["level"] == "ok"
    # The human form names each site's verdict and passes too.
    code, text = cli("doctor", "shopping")
    assert code == 0 and "shopping" in text and "doctor: every site offers" in text, text


BROKEN = f"""
extends: {ROOT_DIR / 'stacks/mini.yaml'}
sites:
  reddit:
    stores:
      - {{kind: postgres, database: postmill, client: [psql, -U, nobody_here]}}
      - {{kind: files, paths: [/var/www/html/public/submission_images, /var/www/html/no/such/folder]}}
      - {{kind: cache, flush: [no-such-flush-command]}}
    init_markers: [/run/postgresql/.init, /run/no-such-marker]
"""


def test_a_stack_that_assumes_too_much_fails_and_up_takes_no_golden(scratch_stack):
    stack = str(scratch_stack(BROKEN))
    args = ["--stack", stack, "--instance", str(SCRATCH_INSTANCE)]
    manifest = snapshots.manifest_path(resolve_target(stack, instance=SCRATCH_INSTANCE), snapshots.GOLDEN)
    before = manifest.read_bytes() if manifest.is_file() else None
    code, res = cli("up", "reddit", *args, "--json")
    assert code == 12, res
    assert "stores[0].client" in res["error"] and "nobody_here" in res["error"], res["error"]
    assert "no-such-flush-command" in res["error"] and "/run/no-such-marker" in res["error"]
    assert "sitectl doctor --json" in res["error"]
    assert (manifest.read_bytes() if manifest.is_file() else None) == before  # no golden taken

    code, res = cli("doctor", "reddit", *args, "--json")
    assert code == 12 and not res["ok"], res
    forum = _site(res, "reddit")
    assert forum["verdict"] == "fail"
    sql = _check(forum, "postgres postmill")
    assert sql["level"] == "fail" and "stores[0].client" in sql["fix"]
    assert _check(forum, "command no-such-flush-command")["level"] == "fail"
    assert _check(forum, "marker /run/no-such-marker")["level"] == "fail"
    assert "touch /run/no-such-marker" in _check(forum, "marker /run/no-such-marker")["fix"]
    assert _check(forum, "marker /run/postgresql/.init")["level"] == "ok"
    assert _check(forum, "folder /var/www/html/no/such/folder")["level"] == "warn"


@pytest.mark.skipif(not shutil.which("busybox"), reason="make test installs Debian's busybox")
def test_the_probe_is_busybox_safe(tmp_path):
    # The probe script itself on a PATH of BusyBox applets and python3 only (the Alpine
    # images' userland), on the host: no Docker needed to show it parses there.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    subprocess.run([shutil.which("busybox"), "--install", "-s", str(bindir)], check=True)
    (bindir / "python3").symlink_to(sys.executable)
    folder = tmp_path / "media"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(b"x" * 5000)
    (tmp_path / "marker").touch()
    args = ["c:python3", "c:no-such-tool", f"d:{folder}", f"d:{tmp_path}/missing", f"m:{tmp_path}/marker",
            f"m:{tmp_path}/absent"]
    r = subprocess.run([str(bindir / "sh"), "-c", PROBE_SH, "sh", *args], capture_output=True, text=True,
                       env={"PATH": str(bindir)})
    assert r.returncode == 0, r.stderr
    got = _parse_probe(r.stdout)
    assert got["find"].endswith("busybox") and got["gnu_find"] == "no"
    assert got["python"][1].count(".") == 2
    assert got["cmd"] == {"python3": str(bindir / "python3"), "no-such-tool": ""}
    assert int(got["dir"][str(folder)]) >= 4 and got["dir"][f"{tmp_path}/missing"] == "missing"
    assert got["marker"] == {f"{tmp_path}/marker": "yes", f"{tmp_path}/absent": "no"}
    assert got["disk"][2].isdigit() and got["rootdisk"][2].isdigit() and got["mem"].isdigit()


def test_hostile_probe_output_is_read_safely_and_disk_needs_add_up(tmp_path, monkeypatch):
    # A container may print anything: unknown keys are dropped, numbers must be ASCII digits.
    got = _parse_probe("mem\t\u00b2\ndb_bytes\t5\nos\tAlpine\ndisk\t/var/lib\toverlay\t1000\n"
                       "rootdisk\t/\toverlay\t1000\ndir\t/a\t900\ndir\t/b\t\u00b9\u00b2\n")
    assert "db_bytes" not in got and got["os"] == "Alpine"
    assert doctor_ops._number(got["mem"]) is None and doctor_ops._number("12") == 12
    # Files copies (900 KiB) and SQL copies (900 KiB) on one file system with 1000 KiB free:
    # together they do not fit, which two separate comparisons would miss.
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path))
    target = resolve_target("mini", instance=SCRATCH_INSTANCE)
    got = _parse_probe("disk\t/var/lib\toverlay\t1000\nrootdisk\t/\toverlay\t1000\ndir\t/a\t900\n")
    got["db_bytes"] = 900 * 1024
    checks = []
    doctor_ops._disk_check(target, target.stack.sites["reddit"], got, checks)
    assert [(c.level, c.check) for c in checks] == [("fail", "disk for files stores' copies and SQL stores' copies")]
    # On two file systems each fits on its own.
    got["rootdisk"] = ("/", "other", "1000")
    checks = []
    doctor_ops._disk_check(target, target.stack.sites["reddit"], got, checks)
    assert [c.level for c in checks] == ["warn", "warn"]  # each fits, with less than half as much again left


def test_a_clients_password_never_reaches_the_report():
    """The failure text names the declared client with its password argument masked: doctor's
    report is what users share when asking for help (docs/security.md: no secrets in logs)."""
    from sitectl.ops.doctor import _masked

    assert _masked(["mysql", "-h", "db", "-uroot", "-ppassword"]) == ["mysql", "-h", "db", "-uroot", "-p***"]
    assert _masked(["mysql", "--password=hunter2", "-p"]) == ["mysql", "--password=***", "-p"]
