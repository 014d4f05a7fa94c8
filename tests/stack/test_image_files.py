"""``images[].files``: files from outside a build context, put into a copy of it for the build
(the mini replicas read the applications' real schemas from ../shared/data/schemas/ this way).
Real Docker: a two-line image on the project's Debian base."""
from __future__ import annotations

import subprocess
import textwrap

import pytest
from python_on_whales import docker

from sitectl.errors import StackError
from sitectl.stack import load_stack
from tests.conftest import cli

TAG = "sitectl/test-image-files:0.1"


def _stack(tmp_path, files: str) -> str:
    ctx = tmp_path / "ctx"
    (ctx / "app").mkdir(parents=True, exist_ok=True)
    (ctx / "app" / "Dockerfile").write_text("FROM sitectl/base:bookworm\nCOPY real/ /real/\nCOPY app/own.txt /own.txt\n")
    (ctx / "app" / "own.txt").write_text("own\n")
    p = tmp_path / "stack.yaml"
    p.write_text(textwrap.dedent(f"""\
        name: filestest
        images:
          - {{tag: "{TAG}", context: ctx, dockerfile: ctx/app/Dockerfile, inputs: [ctx/app], files: {files}}}
        sites:
          homepage: {{kind: homepage, env_var: HOMEPAGE, image: "{TAG}", container: h, ports: ["4399:4399"]}}
        """))
    return str(p)


def _cat(path: str) -> str:
    return subprocess.run(["docker", "run", "--rm", TAG, "cat", path], capture_output=True, text=True,
                          check=True, timeout=60).stdout


@pytest.mark.parametrize("name", ["../x.sql", "/etc/x.sql", "a/../../x.sql", "a//x.sql", "./x.sql"])
def test_a_files_name_outside_the_context_is_refused(tmp_path, name):
    p = _stack(tmp_path, f'{{"{name}": outside.sql}}')
    msg = str(pytest.raises(StackError, load_stack, p).value)
    assert "files" in msg and "relative path inside the context" in msg


def test_outside_file_is_built_in_rebuilt_when_it_changes_and_missing_one_stops_the_build(tmp_path, engine):
    outside = tmp_path / "elsewhere" / "schema.sql"
    outside.parent.mkdir()
    outside.write_text("-- first\n")
    p = _stack(tmp_path, "{real/schema.sql: elsewhere/schema.sql}")
    if docker.image.exists(TAG):
        docker.image.remove(TAG, force=True)
    try:
        rc, out = cli("build", "--stack", p)
        assert rc == 0, out
        assert _cat("/real/schema.sql") == "-- first\n" and _cat("/own.txt") == "own\n"
        assert not (tmp_path / "ctx" / "real").exists()  # the context itself is left as it was
        label = docker.image.inspect(TAG).config.labels["sitectl.source"]

        outside.write_text("-- second\n")                 # the outside file is part of the source hash
        rc, out = cli("build", "--stack", p)
        assert rc == 0 and "built " + TAG in out, out
        assert _cat("/real/schema.sql") == "-- second\n"
        assert docker.image.inspect(TAG).config.labels["sitectl.source"] != label

        outside.unlink()
        image_id = docker.image.inspect(TAG).id
        # Without the outside file the image there is used as it is (its sources cannot be compared) ...
        rc, out = cli("build", "--stack", p)
        assert rc == 0 and "built " + TAG not in out, out
        # ... and building it again is one error naming field, file and image
        rc, out = cli("build", "--stack", p, "--force")
        assert rc != 0
        assert "files['real/schema.sql']" in out and "elsewhere/schema.sql" in out and TAG in out and p in out, out
        assert "Traceback" not in out
        assert docker.image.inspect(TAG).id == image_id     # nothing half-built over the old image
    finally:
        if docker.image.exists(TAG):
            docker.image.remove(TAG, force=True)


def test_mini_stack_names_the_real_schemas_it_builds_on():
    st = load_stack("mini")
    files = {b.tag.split(":")[0]: b.files for b in st.images}
    for tag in ("sitectl/mini-shopping", "sitectl/mini-shopping-admin"):
        assert list(files[tag].values()) == ["../../shared/data/schemas/magento-2.4.8-install.sql"]
    assert list(files["sitectl/mini-postmill"].values()) == ["../../shared/data/schemas/postmill-migrations.sql"]
    assert list(files["sitectl/mini-gitlab"].values()) == ["../../shared/data/schemas/gitlab-structure.sql"]


@pytest.mark.parametrize("plant", ["link", "file", "folder"])
def test_a_files_name_never_writes_through_a_link_or_over_the_context(tmp_path, engine, plant):
    outside = tmp_path / "elsewhere" / "schema.sql"
    outside.parent.mkdir()
    outside.write_text("-- outside\n")
    p = _stack(tmp_path, "{real/schema.sql: elsewhere/schema.sql}")
    victim = tmp_path / "victim"
    victim.mkdir()
    ctx = tmp_path / "ctx"
    if plant == "link":      # the context's real/ is a link to a folder elsewhere
        (ctx / "real").symlink_to(victim, target_is_directory=True)
    elif plant == "file":    # the context already has real/schema.sql
        (ctx / "real").mkdir()
        (ctx / "real" / "schema.sql").write_text("-- the context's own\n")
    else:                    # a folder of that name
        (ctx / "real" / "schema.sql").mkdir(parents=True)
    rc, out = cli("build", "--stack", p, "--force")
    assert rc != 0 and "files['real/schema.sql'] would replace or write through" in out and "Traceback" not in out, out
    assert list(victim.iterdir()) == []
    if plant == "file":
        assert (ctx / "real" / "schema.sql").read_text() == "-- the context's own\n"


@pytest.mark.parametrize("dockerfile, args, named", [
    ("FROM sitectl/base:no-such-suite\n", {}, "sitectl/base:no-such-suite"),
    # as the replicas' Dockerfiles name their bases: an ARG before the first FROM, a later stage
    ("ARG BASE=sitectl/base:no-such-suite\nFROM ${BASE} AS stage\nRUN true\nFROM stage\n", {}, "sitectl/base:no-such-suite"),
    ("ARG BASE=sitectl/base:bookworm\nFROM $BASE\n", {"BASE": "sitectl/base:other-suite"}, "sitectl/base:other-suite"),
])
def test_a_missing_base_image_names_the_command_that_builds_it(tmp_path, engine, dockerfile, args, named):
    """Nothing is pulled from a registry: a Dockerfile FROM a sitectl/base image not built here is
    refused before the build, naming the image and the make targets that build the bases (real
    Docker: the engine is asked whether it has the image)."""
    from sitectl.errors import EngineError

    (tmp_path / "Dockerfile").write_text(dockerfile)
    with pytest.raises(EngineError) as e:
        engine.build("sitectl/test-missing-base:0.1", tmp_path, tmp_path / "Dockerfile", args)
    msg = str(e.value)
    assert f"its base image {named} is missing here" in msg, msg
    assert "`make bullseye`" in msg and "`make engine`" in msg
    assert not engine.image_exists("sitectl/test-missing-base:0.1")
