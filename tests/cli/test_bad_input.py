"""Bad input that needs no Docker engine: each case is one clear error and a non-zero exit,
never a traceback. (Cases found by an adversarial review; docker-side cases are in
test_bad_input_docker.py and test_reset_delta.py.)"""
import json

import pytest

from tests.conftest import invoke

SITE = """\
name: x
sites:
  home:
    kind: homepage
    env_var: HOMEPAGE
    image: {image}
    container: home
    ports: ["24399:4399"]
    url: "{url}"
    environment: {{A: "{env}"}}
    volumes: ["{vol}:/x"]
"""


def stack(tmp_path, **kw):
    vals = {"image": "img", "url": "{origin}", "env": "v", "vol": "/tmp"} | kw
    p = tmp_path / "s.yaml"
    p.write_text(SITE.format(**vals))
    return p


def run(*args):
    r = invoke(list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


@pytest.mark.parametrize("field,value", [
    ("env", "{{__class__}}"), ("vol", "{{__class__}}"), ("image", "img:{{__class__}}"),
    ("url", "{{origin}}}}"), ("url", "{{origin!r}}"), ("url", "{{origin:>9}}"), ("url", "{{0}}"),
])
def test_bad_placeholders_are_load_errors(tmp_path, field, value):
    code, out = run("plan", "--stack", str(stack(tmp_path, **{field: value.replace("{{", "{").replace("}}", "}")})))
    assert code == 2 and "invalid stack file" in out, out


def test_not_utf8_and_duplicate_keys(tmp_path):
    p = tmp_path / "bin.yaml"
    p.write_bytes(b"\xff\xfe\x00name: x")
    assert run("plan", "--stack", str(p))[0] == 2
    d = tmp_path / "dup.yaml"
    d.write_text("name: a\nname: b\nsites: {}\n")
    code, out = run("plan", "--stack", str(d))
    assert code == 2 and "given twice" in out


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0.0.0.0", "", "a b", "x:80", "http://x"])
def test_hosts_refused(host):
    r = invoke(["env", "--host", host, "--json"])
    assert r.exit_code == 2 and "error" in json.loads(r.stdout)


@pytest.mark.parametrize("host", ["LOCALHOST", "shop.localhost", "127.0.0.2"])
def test_loopback_names_publish_on_loopback_only(host):
    code, out = run("plan", "--stack", "webarena", "--host", host, "--json", "shopping")
    assert code == 0
    assert "127.0.0.1:7770:80" in json.loads(out)["commands"][0]["run"]


@pytest.mark.parametrize("text, words", [
    ("instance: abc", "key 'instance' must be a int, not 'abc'"),
    ("instance: 1.9", "key 'instance' must be a int, not 1.9"),
    ("instance: true", "key 'instance' must be a int, not True"),
    ("seed: [1]", "key 'seed' must be a int, not [1]"),
    ("seed: -3", None),  # refused by the seed check, which names the value, not the file
    ("site_hosts: \"yes\"", "key 'site_hosts' must be a bool, not 'yes'"),
    ("site_hosts: 1", "key 'site_hosts' must be a bool, not 1"),
])
def test_config_values_are_typed(tmp_path, text, words):
    c = tmp_path / "c.yaml"
    c.write_text(text + "\n")
    code, out = run("env", "--config", str(c))
    # The error names the file and the key (the message of a bad value in sitectl.yaml).
    assert code == 2 and (f"{c}: {words}" in out if words else "seed -3: give 0 or more" in out), out


@pytest.mark.parametrize("task,words", [
    ({"start_url": 5}, "start_url"), ({"start_url": "x", "storage_state": 5}, "storage_state"),
    ({"start_url": "x", "sites": "home"}, "sites"), ({"start_url": "x", "sites": [["a"]]}, "sites"),
])
def test_task_file_fields_are_checked(tmp_path, task, words):
    f = tmp_path / "t.json"
    f.write_text(json.dumps([task]))
    code, out = run("tasks", "check", str(f))
    assert code == 2 and words in out, out


def test_click_usage_errors_are_json_with_json(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", "import sys; from sitectl.cli import run; sys.argv=['sitectl','env','--scale','huge','--json']; run()"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "huge" in json.loads(r.stdout)["error"]


def test_export_to_a_missing_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SITECTL_SNAPSHOTS_DIR", str(tmp_path / "snaps"))
    (tmp_path / "snaps/i0/s1").mkdir(parents=True)
    (tmp_path / "snaps/i0/s1/manifest.json").write_text(json.dumps({"name": "s1", "sites": {}}))
    code, out = run("snapshot", "export", "s1", str(tmp_path / "no/such/x.tgz"))
    assert code == 2 and "does not exist" in out


@pytest.mark.parametrize("store,message", [
    ("{kind: postgres, database: d, client: [psql], connect: {port: 5432, user: u}}", "not both"),
    ("{kind: files, paths: [/x], connect: {port: 5432, user: u}}", "cannot have connect"),
    ("{kind: mysql, database: d, connect: {port: 70000, user: u}}", "port"),
    ("{kind: mysql, database: d, connect: {port: 3306, user: 'a b'}}", "user"),
    ("{kind: postgres, database: d, connect: {port: 5432, user: u, password_env: 'X-Y'}}", "password_env"),
    ("{kind: postgres, database: d, connect: {port: 5432, user: u, password: hunter2}}", "password"),
])
def test_bad_network_store_entries(tmp_path, store, message):
    """A store's ``connect`` (network session) is checked at load time; a password is never a
    field (only the name of an environment variable holding it)."""
    p = tmp_path / "s.yaml"
    p.write_text(SITE.format(image="img", url="{origin}", env="v", vol="/tmp") + f"    stores: [{store}]\n")
    code, out = run("plan", "--stack", str(p))
    assert code == 2 and "invalid stack file" in out and message in out, out
    assert "hunter2" not in out


def test_instance_numbers_stop_before_ports_collide():
    # Classifieds 9980 and the shop's admin 7780 differ by 22 x 100: instance 22's admin would be
    # instance 0's classifieds (forum 9999 and homepage 4399 meet only at 56).
    code, out = run("env", "--instance", "22")
    assert code == 2 and "give 0 to 21" in out, out
    code, out = run("env", "--instance", "21", "--json")
    assert code == 0 and json.loads(out)["REDDIT"] == "http://127.0.0.1:12099"
