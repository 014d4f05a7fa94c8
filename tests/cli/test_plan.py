"""`sitectl plan --stack webarena` against WebArena's official commands, item by item.

The expected commands are WebArena's environment_docker/README.md (at f62e0b9) as quoted in
research/webarena-official.md §1.1-§1.6, with <host> = example.org and the ZIM folder = /zims.
"""
import json
import shlex

from tests.conftest import invoke

HOST = "example.org"
OFFICIAL = {
    "shopping": [
        "docker load --input shopping_final_0712.tar",
        "docker run --name shopping -p 7770:80 -d shopping_final_0712",
        'docker exec shopping /var/www/magento2/bin/magento setup:store-config:set --base-url="http://<host>:7770"',
        "docker exec shopping mysql -u magentouser -pMyPassword magentodb -e 'UPDATE core_config_data SET value=\"http://<host>:7770/\" WHERE path = \"web/secure/base_url\";'",
        "docker exec shopping /var/www/magento2/bin/magento cache:flush",
    ],
    "shopping_admin": [
        "docker load --input shopping_admin_final_0719.tar",
        "docker run --name shopping_admin -p 7780:80 -d shopping_admin_final_0719",
        'docker exec shopping_admin /var/www/magento2/bin/magento setup:store-config:set --base-url="http://<host>:7780"',
        "docker exec shopping_admin mysql -u magentouser -pMyPassword magentodb -e 'UPDATE core_config_data SET value=\"http://<host>:7780/\" WHERE path = \"web/secure/base_url\";'",
        "docker exec shopping_admin php /var/www/magento2/bin/magento config:set admin/security/password_is_forced 0",
        "docker exec shopping_admin php /var/www/magento2/bin/magento config:set admin/security/password_lifetime 0",
        "docker exec shopping_admin /var/www/magento2/bin/magento cache:flush",
    ],
    "reddit": [
        "docker load --input postmill-populated-exposed-withimg.tar",
        "docker run --name forum -p 9999:80 -d postmill-populated-exposed-withimg",
    ],
    "gitlab": [
        "docker load --input gitlab-populated-final-port8023.tar",
        "docker run --name gitlab -d -p 8023:8023 gitlab-populated-final-port8023 /opt/gitlab/embedded/bin/runsvdir-start",
        "docker exec gitlab sed -i \"s|^external_url.*|external_url 'http://<host>:8023'|\" /etc/gitlab/gitlab.rb",
        "docker exec gitlab gitlab-ctl reconfigure",
    ],
    "wikipedia": [
        "docker run -d --name=wikipedia --volume=/zims/:/data -p 8888:80 ghcr.io/kiwix/kiwix-serve:3.3.0 wikipedia_en_all_maxi_2022-05.zim",
    ],
}


def parse_run(argv: list[str]) -> dict:
    """Normalise a `docker run` argv into {name, ports, volumes, detach, image, command}."""
    assert argv[:2] == ["docker", "run"]
    out = {"name": None, "ports": [], "volumes": [], "detach": False, "image": None, "command": []}
    it = iter(argv[2:])
    for a in it:
        if out["image"] is not None:
            out["command"].append(a)
        elif a == "-d":
            out["detach"] = True
        elif a.startswith("--name"):
            out["name"] = a.split("=", 1)[1] if "=" in a else next(it)
        elif a == "-p":
            out["ports"].append(next(it))
        elif a.startswith("--volume") or a == "-v":
            v = a.split("=", 1)[1] if "=" in a else next(it)
            src, dst = v.split(":")[:2]
            out["volumes"].append((src.rstrip("/"), dst))
        else:
            out["image"] = a
    return out


def ours() -> dict:
    r = invoke(["plan", "--stack", "webarena", "--host", HOST, "--data-dir", "/zims", "--json"])
    assert r.exit_code == 0, r.output
    return {e["site"]: e for e in json.loads(r.stdout)["commands"]}


def test_plan_matches_official_commands_item_by_item():
    plan = ours()
    for site, official in OFFICIAL.items():
        cmds = [shlex.split(c.replace("<host>", HOST)) for c in official]
        e = plan[site]
        loads = [c for c in cmds if c[1] == "load"]
        runs = [c for c in cmds if c[1] == "run"]
        execs = [c for c in cmds if c[1] == "exec"]
        assert e["load"] == (loads[0] if loads else None), site
        assert parse_run(e["run"]) == parse_run(runs[0]), site
        assert e["post_start"] == execs, site


def test_plan_default_is_loopback_only():
    r = invoke(["plan", "--stack", "webarena", "--host", "127.0.0.1", "--json"])
    assert r.exit_code == 0, r.output
    run = {e["site"]: e["run"] for e in json.loads(r.stdout)["commands"]}
    assert "127.0.0.1:7770:80" in run["shopping"]


def test_plan_text_is_shell_quoted():
    r = invoke(["plan", "--stack", "webarena", "--host", HOST, "gitlab"])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if line.startswith("docker exec gitlab sed")]
    assert shlex.split(lines[0])[-2] == f"s|^external_url.*|external_url 'http://{HOST}:8023'|"
