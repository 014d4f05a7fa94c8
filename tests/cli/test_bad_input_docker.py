"""Bad input against the real engine: each case gives one clear error and a non-zero exit."""
import socket

import pytest

from sitectl.stack.target import PORT_STEP
from tests.conftest import SCRATCH_INSTANCE, invoke

OFFSET = PORT_STEP * SCRATCH_INSTANCE  # instance N publishes declared ports + 100 * N

pytestmark = pytest.mark.docker

HOMEPAGE = """\
    name: scratch
    sites:
      home:
        kind: homepage
        env_var: HOMEPAGE
        image: {image}
        container: home
        ports: ["{port}:4399"]
        start_timeout: {timeout}
        {extra}
    """


def cli(*args):
    return invoke([*args, "--instance", str(SCRATCH_INSTANCE)])


def free_port() -> int:
    """A declared port whose instance-7 host port (port + 700) is free now."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port - OFFSET > 1024:
            return port - OFFSET


def test_host_port_in_use(mini, scratch_stack):
    while True:  # a held port whose declared port (held - 700) is a valid port
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        if port - OFFSET > 1024:
            break
        holder.close()
    holder.listen()
    try:
        p = scratch_stack(HOMEPAGE.format(image="sitectl/mini-homepage:0.1", port=port - OFFSET, timeout=30, extra=""))
        r = cli("up", "--stack", str(p))
        assert r.exit_code == 3, r.output
        assert f"host port {port} is already in use" in r.output and "'home'" in r.output
    finally:
        holder.close()


def test_port_held_by_a_container_is_named(mini, scratch_stack):
    # The mini stack's homepage holds 4399; instance 7 publishes the declared port + 700.
    p = scratch_stack(HOMEPAGE.format(image="sitectl/mini-homepage:0.1", port=4399 - OFFSET, timeout=30, extra=""))
    r = cli("up", "--stack", str(p))
    assert r.exit_code == 3 and "in use by container 'homepage'" in r.output, r.output


def test_image_missing_names_the_step(scratch_stack):
    p = scratch_stack(HOMEPAGE.format(image="sitectl/not-built:9", port=free_port(), timeout=30,
                                      extra="image_archive: not-built.tar"))
    r = cli("up", "--stack", str(p))
    assert r.exit_code == 3, r.output
    assert "image sitectl/not-built:9 is missing" in r.output and "sitectl images load DIR" in r.output


def test_container_that_exits_shows_its_last_log_lines(mini, scratch_stack):
    p = scratch_stack(HOMEPAGE.format(
        image="sitectl/base:bookworm", port=free_port(), timeout=60,
        extra='command: [sh, -c, "echo replica-broke-on-purpose; exit 3"]'))
    r = cli("up", "--stack", str(p))
    assert r.exit_code == 3, r.output
    assert "exited during start" in r.output and "exit code 3" in r.output
    assert "replica-broke-on-purpose" in r.output


def test_probe_that_never_passes_names_probe_and_last_response(mini, scratch_stack, tmp_path):
    (tmp_path / "never.yaml").write_text(
        "kind: homepage\nprobes:\n  - {name: never-there, type: http, path: /no-such-page, level: ready}\n")
    p = scratch_stack(HOMEPAGE.format(image="sitectl/mini-homepage:0.1", port=free_port(), timeout=3,
                                      extra="health: never.yaml"))
    r = cli("up", "--stack", str(p))
    assert r.exit_code == 5, r.output
    assert "probe 'never-there' did not pass within 3 s" in r.output and "HTTP 404" in r.output


def test_engine_not_running(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    r = invoke(["status"])
    assert r.exit_code == 3 and "Docker engine is not running" in r.output, r.output


def test_images_load_reads_official_archives(engine, scratch_stack, tmp_path):
    """`sitectl images load DIR` docker-loads each site's image_archive found in DIR.

    The archive here is made with `docker save` from the local base image under a new tag,
    standing in for WebArena's .tar files (which cannot be fetched here)."""
    tag = "sitectl/load-probe:1"
    engine.docker.image.tag("sitectl/base:bookworm", tag)
    engine.docker.image.save(tag, output=tmp_path / "load-probe.tar")
    engine.docker.image.remove(tag)
    assert not engine.image_exists(tag)
    p = scratch_stack(HOMEPAGE.format(image=tag, port=free_port(), timeout=30,
                                      extra="image_archive: load-probe.tar"))
    r = invoke(["images", "load", str(tmp_path), "--stack", str(p), "--json",
                                  "--instance", str(SCRATCH_INSTANCE)])
    assert r.exit_code == 0, r.output
    import json

    assert json.loads(r.stdout)["archives"][0]["status"] == "loaded"
    assert engine.image_exists(tag)
    r = invoke(["images", "load", str(tmp_path / "nope"), "--stack", str(p)])
    assert r.exit_code == 2 and "not a directory" in r.output
    engine.docker.image.remove(tag)
