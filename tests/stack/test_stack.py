"""Stack files: the shipped ones load; bad ones fail with the file, line, site and field."""
import textwrap

import pytest

from sitectl.errors import StackError, UsageError
from sitectl.stack import load_stack
from tests.conftest import invoke


def write(tmp_path, text, name="stack.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_shipped_stacks_load_with_one_code_path():
    mini, real = load_stack("mini"), load_stack("webarena")
    assert list(mini.sites) == list(real.sites) == [
        "shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map", "homepage", "classifieds"]
    for name in mini.sites:
        m, r = mini.sites[name], real.sites[name]
        # Same container names, ports, command override and post-start steps; images differ.
        assert (m.container, m.ports, m.command, m.post_start, m.url) == (r.container, r.ports, r.command, r.post_start, r.url)
        # The same services, by the same names, aliases, environment and restart policy.
        assert {k: (v.container, v.aliases, v.environment, v.restart) for k, v in m.services.items()} == \
            {k: (v.container, v.aliases, v.environment, v.restart) for k, v in r.services.items()}
    assert real.sites["classifieds"].services["db"].image == "mysql:8.1"
    assert mini.sites["classifieds"].services["db"].image.startswith("sitectl/mini-classifieds-db:")
    assert real.sites["shopping"].image == "shopping_final_0712"
    assert mini.sites["shopping"].image.startswith("sitectl/mini-")


def test_malformed_yaml_names_line(tmp_path):
    p = write(tmp_path, """\
        name: x
        sites:
          a: {kind: homepage
        """)
    with pytest.raises(StackError) as e:
        load_stack(p)
    assert str(p) in str(e.value) and ":4:" in str(e.value) and "malformed YAML" in str(e.value)


def test_bad_field_names_file_line_site_and_field(tmp_path):
    p = write(tmp_path, """\
        name: x
        sites:
          home:
            kind: homepage
            env_var: HOMEPAGE
            image: img
            container: home
            ports: ["99999:80"]
        """)
    with pytest.raises(StackError) as e:
        load_stack(p)
    msg = str(e.value)
    assert f"{p}:8:" in msg and "site 'home'" in msg and "field 'ports'" in msg


def test_unknown_kind_and_unknown_field(tmp_path):
    p = write(tmp_path, """\
        name: x
        sites:
          home:
            kind: wordpress
            env_var: HOMEPAGE
            image: img
            container: home
            ports: ["4399:4399"]
            colour: blue
        """)
    msg = str(pytest.raises(StackError, load_stack, p).value)
    assert "field 'kind'" in msg and ":4:" in msg
    assert "field 'colour'" in msg and ":9:" in msg


def test_unknown_placeholder_and_trailing_slash(tmp_path):
    p = write(tmp_path, """\
        name: x
        sites:
          home:
            kind: homepage
            env_var: HOMEPAGE
            image: img
            container: home
            ports: ["4399:4399"]
            url: "{origin}/"
            post_start:
              - {name: s, exec: [echo, "{hostname}"]}
        """)
    msg = str(pytest.raises(StackError, load_stack, p).value)
    assert "trailing slash" in msg and "unknown placeholder {hostname}" in msg


def test_duplicate_host_port(tmp_path):
    p = write(tmp_path, """\
        name: x
        sites:
          a: {kind: homepage, env_var: A, image: i, container: a, ports: ["4399:4399"]}
          b: {kind: homepage, env_var: B, image: i, container: b, ports: ["4399:80"]}
        """)
    assert "share host port 4399" in str(pytest.raises(StackError, load_stack, p).value)


def test_extends_merges_and_keeps_parent_values(tmp_path):
    write(tmp_path, """\
        name: base
        sites:
          a: {kind: homepage, env_var: A, image: i, container: a, ports: ["4399:4399"], mutable: true}
        """, "base.yaml")
    p = write(tmp_path, """\
        name: child
        extends: base.yaml
        sites:
          a: {image: j}
        """)
    st = load_stack(p)
    assert st.sites["a"].image == "j" and st.sites["a"].mutable and st.sites["a"].ports == ["4399:4399"]


def test_unknown_stack_name():
    assert "unknown stack 'nope'" in str(pytest.raises(StackError, load_stack, "nope").value)


def test_unknown_site_name_is_one_clear_error():
    with pytest.raises(UsageError) as e:
        load_stack("mini").select(["shoping"])
    assert "unknown site 'shoping'" in str(e.value) and "shopping" in str(e.value)
    r = invoke(["plan", "shoping"])
    assert r.exit_code == 2 and "unknown site 'shoping'" in r.output


def test_cli_reports_malformed_stack_and_exits_2(tmp_path):
    p = write(tmp_path, "name: x\nsites: [\n")
    r = invoke(["plan", "--stack", str(p)])
    assert r.exit_code == 2 and "malformed YAML" in r.output and str(p) in r.output


def test_config_file_supplies_host(tmp_path):
    cfg = write(tmp_path, "host: cfg.example.org\n", "sitectl.yaml")
    r = invoke(["env", "--config", str(cfg), "--json"])
    assert r.exit_code == 0 and "http://cfg.example.org:7770" in r.output
    bad = write(tmp_path, "hots: x\n", "bad.yaml")
    r = invoke(["env", "--config", str(bad)])
    assert r.exit_code == 2 and "unknown key(s) hots" in r.output


def test_sources_name_every_file_read_with_the_digest_of_its_bytes(tmp_path):
    import hashlib

    write(tmp_path, """\
        name: base
        sites:
          a: {kind: homepage, env_var: A, image: i, container: a, ports: ["4399:4399"], health: h.yaml}
        """, "base.yaml")
    (tmp_path / "h.yaml").write_text("kind: homepage\nprobes:\n  - {name: up, type: http, path: /, status: [200]}\n")
    p = write(tmp_path, "name: child\nextends: base.yaml\n")
    st = load_stack(p)
    files = [tmp_path / "stack.yaml", tmp_path / "base.yaml", tmp_path / "h.yaml"]
    assert st.sources == {str(f): (str(f.resolve()), hashlib.sha256(f.read_bytes()).hexdigest()) for f in files}


def test_sources_cannot_be_set_in_a_stack_file(tmp_path):
    p = write(tmp_path, """\
        name: x
        sources: {"/etc/passwd": "0"}
        sites:
          a: {kind: homepage, env_var: A, image: i, container: a, ports: ["4399:4399"]}
        """)
    with pytest.raises(StackError, match=r"stack\.yaml: field 'sources' is set by sitectl"):
        load_stack(p)


@pytest.mark.parametrize("host", ["localhost\n", "127.0.0.1\n", "shop.example.org\n"])
def test_a_host_with_a_trailing_newline_is_refused(host):
    from sitectl.stack.target import validate_host

    with pytest.raises(UsageError, match="invalid host"):
        validate_host(host)


def test_a_stack_name_longer_than_the_system_allows_is_one_clear_error():
    with pytest.raises(StackError, match="cannot use this stack file"):
        load_stack("x" * 5000 + ".yaml")


def test_a_billion_laughs_file_is_refused_naming_it(tmp_path):
    # Ten lines of nested anchors expand to 10^9 nodes: refused while the file is read, before
    # anything walks the data (issue 18), through the CLI too. A few anchors stay fine.
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb = tmp_path / "laughs.yaml"
    bomb.write_text("\n".join(lines) + "\nname: laughs\n")
    with pytest.raises(StackError, match=r"laughs\.yaml: its aliases \(\*name\) expand to more than 200000 nodes"):
        load_stack(bomb)
    r = invoke(["plan", "--stack", str(bomb)])
    assert r.exit_code == 2 and "laughs.yaml" in r.output and "expand to more than" in r.output, r.output
    big = tmp_path / "big.yaml"
    big.write_text("name: big\n" + "#" * (4 << 20) + "\n")
    with pytest.raises(StackError, match=r"big\.yaml: \d+ bytes; a stack file may have at most 4194304"):
        load_stack(big)


@pytest.mark.parametrize("services,steps,words", [
    ({"db": {"image": "i", "container": "x_db", "aliases": ["DB"]}}, "", ["alias 'DB' is not a host name"]),
    ({"db": {"image": "i", "container": "web"}}, "", ["share container 'web'"]),
    ({"db": {"image": "i", "container": "x_db", "aliases": ["web"]}}, "", ["network alias 'web' is the container name"]),
    ({"db": {"image": "i", "container": "x_db", "volumes": ["{origin_nosuch}:/x"]}}, "",
     ["placeholder {origin_nosuch} names no site"]),
    ({"db": {"image": "i", "container": "x_db", "restart": "sometimes"}}, "", ["restart"]),
    ({"db": {"image": "i", "container": "x_db", "persist": ["var/lib/mysql"]}}, "", ["persist: 'var/lib/mysql'"]),
    ({"db": {"image": "i", "container": "x_db", "persist": ["/var/../etc"]}}, "", ["without '.', '..'"]),
    ({"db": {"image": "i", "container": "x_db", "persist": ["/"]}}, "", ["not /"]),
    ({"db": {"image": "i", "container": "x_db", "persist": ["/a", "/a"]}}, "", ["listed twice"]),
    ({"db": {"image": "i", "container": "x_db", "workdir": "tmp"}}, "", ["workdir: 'tmp'"]),
    ({"db": {"image": "i", "container": "x_db"}}, "    post_start: [{name: load, service: cache, exec: ['true']}]\n",
     ["names service 'cache'", "services: db"]),
])
def test_bad_services_are_one_clear_error(tmp_path, services, steps, words):
    """A site's service containers (stack-files.md, "Service containers"): each fault is one
    StackError naming the file and what is wrong; nothing runs."""
    import json

    p = tmp_path / "stack.yaml"
    p.write_text("name: x\nsites:\n  web:\n    kind: osclass\n    env_var: WEB\n    image: img\n    container: web\n"
                 f"    ports: ['9980:9980']\n    services: {json.dumps(services)}\n" + steps)
    with pytest.raises(StackError) as e:
        load_stack(p)
    assert str(p) in str(e.value) and all(w in str(e.value) for w in words), str(e.value)
