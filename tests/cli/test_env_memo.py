"""`sitectl env` remembers its answer (sitectl/ops/envvars.py): a second run answers without
loading the stack model, and no change to what the answer comes from is ever answered from a
stale entry. Each run is the real CLI in a fresh interpreter; the engine is whatever answers
here (none is fine: the labels are then "none recorded", part of the key like any others)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from sitectl.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print('PYDANTIC:' + str('pydantic' in sys.modules), file=sys.stderr)
"""


def run_env(cache: Path | None, *args, cwd: Path, extra_env: dict | None = None, **kw):
    """One `sitectl env --json ...` in a new interpreter: (exit code, JSON or None, whether the
    stack model was imported, stderr)."""
    env = {**os.environ, "SITECTL_CACHE_DIR": str(cache)}
    env.pop("SITECTL_CONFIG", None)
    if cache is None:
        env.pop("SITECTL_CACHE_DIR")
    env.update(extra_env or {})
    r = subprocess.run([sys.executable, "-c", PROBE, "env", "--json", *args], capture_output=True, text=True,
                       cwd=cwd, env=env, timeout=120, **kw)
    loaded = "PYDANTIC:True" in r.stderr
    values = json.loads(r.stdout) if r.returncode == 0 else None
    return r.returncode, values, loaded, r.stderr


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "env").glob("*.json"))


STACK = """\
name: s
sites:
  shopping: {kind: magento-storefront, env_var: SHOPPING, image: i, container: c1, ports: ["7770:80"]}
  homepage: {kind: homepage, env_var: HOMEPAGE, image: i, container: c2, ports: ["4399:4399"]}
"""


@pytest.fixture
def stack_file(tmp_path) -> Path:
    """A small stack file in a folder of its own."""
    p = tmp_path / "stack" / "s.yaml"
    p.parent.mkdir()
    p.write_text(STACK)
    return p


def test_second_run_answers_from_the_memo_without_the_stack_model(tmp_path, stack_file):
    cache = tmp_path / "cache"
    code, first, loaded, err = run_env(cache, "--stack", str(stack_file), "--host", "10.0.0.5", cwd=tmp_path)
    assert code == 0, err
    assert loaded, "the first run loads and validates the stack"
    assert first["SHOPPING"] == "http://10.0.0.5:7770"
    assert len(entries(cache)) == 1
    code, second, loaded, err = run_env(cache, "--stack", str(stack_file), "--host", "10.0.0.5", cwd=tmp_path)
    assert code == 0, err
    assert second == first
    assert not loaded, "a matching entry answers without importing pydantic"


def test_an_edited_stack_file_is_never_answered_from_the_old_entry(tmp_path, stack_file):
    cache = tmp_path / "cache"
    args = ("--stack", str(stack_file), "--host", "10.0.0.5")
    assert run_env(cache, *args, cwd=tmp_path)[1]["SHOPPING"] == "http://10.0.0.5:7770"
    stack_file.write_text(stack_file.read_text().replace('"7770:80"', '"7771:80"'))
    code, values, loaded, err = run_env(cache, *args, cwd=tmp_path)
    assert code == 0, err
    assert values["SHOPPING"] == "http://10.0.0.5:7771"
    assert loaded


def test_a_change_in_an_extended_file_or_a_health_check_file_is_seen(tmp_path, stack_file):
    cache = tmp_path / "cache"
    child = stack_file.parent / "child.yaml"
    child.write_text("extends: s.yaml\nname: child\nsites:\n  homepage:\n    health: home.yaml\n")
    (stack_file.parent / "home.yaml").write_text((ROOT / "healthchecks" / "homepage.yaml").read_text())
    args = ("--stack", str(child), "--host", "10.0.0.5")
    assert run_env(cache, *args, cwd=tmp_path)[1]["SHOPPING"] == "http://10.0.0.5:7770"
    # The parent changes: the child's answer changes.
    stack_file.write_text(stack_file.read_text().replace('"7770:80"', '"7772:80"'))
    code, values, loaded, err = run_env(cache, *args, cwd=tmp_path)
    assert (code, values["SHOPPING"], loaded) == (0, "http://10.0.0.5:7772", True), err
    # The health-check file becomes invalid: the stack no longer loads, and env says so.
    (stack_file.parent / "home.yaml").write_text("kind: homepage\nprobes: []\n")
    code, values, loaded, err = run_env(cache, *args, cwd=tmp_path)
    assert code != 0 and "home.yaml" in err and "probes" in err, err
    # A deleted health-check file: the same.
    (stack_file.parent / "home.yaml").unlink()
    code, _, _, err = run_env(cache, *args, cwd=tmp_path)
    assert code != 0 and "home.yaml" in err and "not found" in err, err


def test_errors_are_never_remembered(tmp_path, stack_file):
    cache = tmp_path / "cache"
    for _ in range(2):
        code, _, loaded, err = run_env(cache, "--stack", str(stack_file), "--instance", "500", cwd=tmp_path)
        assert code != 0 and "--instance 500" in err and loaded, err
    assert entries(cache) == []


def test_options_config_file_and_working_folder_are_part_of_the_key(tmp_path, stack_file):
    cache = tmp_path / "cache"
    base = ("--stack", str(stack_file))
    a = run_env(cache, *base, "--host", "10.0.0.5", cwd=tmp_path)[1]
    b = run_env(cache, *base, "--host", "10.0.0.6", cwd=tmp_path)[1]
    c = run_env(cache, *base, "--host", "10.0.0.5", "--instance", "2", cwd=tmp_path)[1]
    d = run_env(cache, *base, "--host", "localhost", "--site-hosts", cwd=tmp_path)[1]
    assert (a["SHOPPING"], b["SHOPPING"], c["SHOPPING"], d["SHOPPING"]) == (
        "http://10.0.0.5:7770", "http://10.0.0.6:7770", "http://10.0.0.5:7970", "http://shopping.localhost:7770")
    # A config file in the working folder: its host is taken, and a changed host is seen.
    work = tmp_path / "work"
    work.mkdir()
    (work / "sitectl.yaml").write_text("host: 10.1.1.1\n")
    assert run_env(cache, *base, cwd=work)[1]["SHOPPING"] == "http://10.1.1.1:7770"
    (work / "sitectl.yaml").write_text("host: 10.2.2.2\n")
    assert run_env(cache, *base, cwd=work)[1]["SHOPPING"] == "http://10.2.2.2:7770"
    # Same relative --stack from another folder: another file, another answer.
    other = tmp_path / "other"
    (other / "stack").mkdir(parents=True)
    (other / "stack" / "s.yaml").write_text(stack_file.read_text().replace('"7770:80"', '"7773:80"'))
    rel = ("--stack", "stack/s.yaml", "--host", "10.0.0.5")
    assert run_env(cache, *rel, cwd=tmp_path)[1]["SHOPPING"] == "http://10.0.0.5:7770"
    assert run_env(cache, *rel, cwd=other)[1]["SHOPPING"] == "http://10.0.0.5:7773"


def test_a_damaged_entry_is_a_miss_and_is_rewritten(tmp_path, stack_file):
    cache = tmp_path / "cache"
    args = ("--stack", str(stack_file), "--host", "10.0.0.5")
    good = run_env(cache, *args, cwd=tmp_path)[1]
    (entry,) = entries(cache)
    for damage in ("", "{", "[]", '{"sources": {}, "values": {}}', '{"sources": {"/x": 1}, "values": {}}',
                   json.dumps({"sources": {str(stack_file): "0" * 64}, "values": {"SHOPPING": "http://evil"}})):
        entry.write_text(damage)
        code, values, loaded, err = run_env(cache, *args, cwd=tmp_path)
        assert (code, values, loaded) == (0, good, True), (damage, err)
        assert json.loads(entry.read_text())["values"] == good


def test_a_cache_folder_that_cannot_be_written_is_no_error(tmp_path, stack_file):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    code, values, loaded, err = run_env(blocker, "--stack", str(stack_file), "--host", "10.0.0.5", cwd=tmp_path)
    assert (code, values["SHOPPING"], loaded) == (0, "http://10.0.0.5:7770", True), err
    code, values, loaded, err = run_env(blocker, "--stack", str(stack_file), "--host", "10.0.0.5", cwd=tmp_path)
    assert (code, loaded) == (0, True), err


def test_a_changed_sitectl_module_is_a_new_key(tmp_path, stack_file):
    """sitectl's own source is part of the key (an editable checkout changes under a harness)."""
    cache = tmp_path / "cache"
    args = ("--stack", str(stack_file), "--host", "10.0.0.5")
    run_env(cache, *args, cwd=tmp_path)
    module = ROOT / "sitectl" / "version.py"
    st = module.stat()
    try:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        code, _, loaded, err = run_env(cache, *args, cwd=tmp_path)
        assert (code, loaded) == (0, True), err
    finally:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert len(entries(cache)) == 2


def test_a_symbolic_link_turned_elsewhere_is_seen(tmp_path, stack_file):
    """The stack file, the file it extends and the stacks folder, each reached through a link."""
    cache = tmp_path / "cache"
    other = stack_file.with_name("other.yaml")
    other.write_text(STACK.replace('"7770:80"', '"7771:80"'))
    link = stack_file.with_name("link.yaml")
    link.symlink_to("s.yaml")
    assert run_env(cache, "--stack", str(link), cwd=tmp_path)[1]["SHOPPING"].endswith(":7770")
    link.unlink()
    link.symlink_to("other.yaml")
    code, values, loaded, err = run_env(cache, "--stack", str(link), cwd=tmp_path)
    assert (code, values["SHOPPING"][-5:], loaded) == (0, ":7771", True), err
    # A stacks folder that is a link (SITECTL_STACKS_DIR), turned to another folder.
    for v, port in (("v1", "7770"), ("v2", "7772")):
        (tmp_path / v).mkdir()
        (tmp_path / v / "x.yaml").write_text(STACK.replace('"7770:80"', f'"{port}:80"'))
    cur = tmp_path / "cur"
    cur.symlink_to("v1")
    env = {"SITECTL_STACKS_DIR": str(cur)}
    assert run_env(cache, "--stack", "x", cwd=tmp_path, extra_env=env)[1]["SHOPPING"].endswith(":7770")
    cur.unlink()
    cur.symlink_to("v2")
    code, values, loaded, err = run_env(cache, "--stack", "x", cwd=tmp_path, extra_env=env)
    assert (code, values["SHOPPING"][-5:], loaded) == (0, ":7772", True), err


def test_planted_entries_never_hang_crash_or_answer(tmp_path, stack_file):
    cache = tmp_path / "cache"
    args = ("--stack", str(stack_file), "--host", "10.0.0.5")
    good = run_env(cache, *args, cwd=tmp_path)[1]
    (entry,) = entries(cache)
    for plant in ("deep", "fifo", "zero", "huge"):
        entry.unlink()
        if plant == "deep":
            entry.write_text("[" * 200_000)
        elif plant == "fifo":
            os.mkfifo(entry)
        elif plant == "zero":
            entry.symlink_to("/dev/zero")
        else:
            entry.write_text(json.dumps({"sources": {}, "values": {"x": "y" * (2 << 20)}}))
        code, values, loaded, err = run_env(cache, *args, cwd=tmp_path)
        assert (code, values, loaded) == (0, good, True), (plant, err)


def test_a_cache_folder_others_may_write_is_not_used(tmp_path, stack_file):
    cache = tmp_path / "cache"
    (cache / "env").mkdir(parents=True)
    (cache / "env").chmod(0o777)
    args = ("--stack", str(stack_file), "--host", "10.0.0.5")
    for _ in range(2):
        code, values, loaded, err = run_env(cache, *args, cwd=tmp_path)
        assert (code, values["SHOPPING"], loaded) == (0, "http://10.0.0.5:7770", True), err
    assert entries(cache) == []


def test_the_memo_keeps_the_newest_entries(tmp_path, stack_file):
    from sitectl.ops.envvars import MEMO_ENTRIES

    cache = tmp_path / "cache"
    (cache / "env").mkdir(parents=True, mode=0o700)
    for i in range(MEMO_ENTRIES + 20):
        old = cache / "env" / f"{i:064x}.json"
        old.write_text("{}")
        os.utime(old, ns=(1_000_000_000 * (i + 1), 1_000_000_000 * (i + 1)))
    run_env(cache, "--stack", str(stack_file), "--host", "10.0.0.5", cwd=tmp_path)
    kept = entries(cache)
    assert len(kept) == MEMO_ENTRIES and not (cache / "env" / f"{0:064x}.json").exists()


def test_no_home_folder_is_no_error(tmp_path, stack_file, monkeypatch):
    """No HOME and a user the system does not know: ``Path.home()`` raises RuntimeError. Such a
    user cannot run this checkout's Python here (it lives under /root), so the test runs the
    CLI in-process with ``Path.home`` made to raise as it would (the one stand-in)."""
    from pathlib import Path as P

    from tests.conftest import invoke

    for var in ("HOME", "XDG_CACHE_HOME", "SITECTL_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)

    def no_home(cls=None):
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(P, "home", classmethod(no_home))
    monkeypatch.chdir(tmp_path)
    r = invoke(["env", "--json", "--stack", str(stack_file), "--host", "10.0.0.5"])
    assert r.exit_code == 0 and json.loads(r.stdout)["SHOPPING"] == "http://10.0.0.5:7770", r.output
