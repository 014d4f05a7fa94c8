"""``sitectl k8s render``: the manifests validate against Kubernetes' own schemas
(``kubernetes-validate``, strict: an unknown field fails) and carry what the fleet needs.

No Kubernetes cluster runs here, so the manifests are checked against the schemas, not
applied; the sidecar's way into its site (nsenter through a shared PID namespace) is run for
real with Docker in tests/fleet/test_pod_agent.py.
"""
from __future__ import annotations

import copy
import stat
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.conftest import cli

VERSIONS = ["1.30.0", "1.33.0", kubernetes_validate.latest_version()]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, list[dict]]:
    out = tmp_path_factory.mktemp("k8s")
    token = out / "token"
    code, res = cli("k8s", "render", "--instances", "2", "--out", str(out / "m"), "--token-file", str(token), "--json")
    assert code == 0, res
    files = {Path(f).name: list(yaml.safe_load_all(Path(f).read_text())) for f in res["files"]}
    files["_token"] = token.read_text().strip()
    files["_dir"] = out / "m"
    return files


def _objects(rendered) -> list[dict]:
    return [o for name, objs in rendered.items() if not name.startswith("_") for o in objs]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_validates_strictly(rendered, version):
    objs = _objects(rendered)
    assert len(objs) > 20
    for o in objs:
        kubernetes_validate.validate(o, version, strict=True)


def test_the_validator_is_not_vacuous(rendered):
    sts = next(o for o in _objects(rendered) if o["kind"] == "StatefulSet")
    bad = copy.deepcopy(sts)
    bad["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] = {"no": "port"}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, VERSIONS[-1], strict=True)
    bad = copy.deepcopy(sts)
    bad["spec"]["template"]["spec"]["sharedProcessNamespace"] = True  # a typo: unknown field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, VERSIONS[-1], strict=True)


def test_stateful_sites_get_a_statefulset_with_the_agent_sidecar_sharing_its_volume(rendered):
    objs = rendered["30-instance-1.yaml"]
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objs}
    # Sites with snapshot stores are StatefulSets; the read-only ones Deployments; each has a Service.
    # Sites with snapshot stores or post-start steps (the homepage fills its links) are
    # StatefulSets with an agent; the others (map, wiki) Deployments; each has a Service.
    for name in ("shopping", "shopping-admin", "reddit", "gitlab", "homepage"):
        assert ("StatefulSet", name) in kinds and ("Service", name) in kinds
    for name in ("map", "wikipedia"):
        assert ("Deployment", name) in kinds and ("Service", name) in kinds
    # Namespaces come first (their own file, applied first), then the Secrets that live in them.
    assert [o["metadata"]["name"] for o in rendered["00-namespaces.yaml"]] == ["sitectl", "sitectl-i0", "sitectl-i1"]
    assert sorted(n for n in rendered if not n.startswith("_"))[:2] == ["00-namespaces.yaml", "10-secrets.yaml"]
    # A probe path joins the site's base path as sitectl's own probe does (no trailing slash).
    wiki = next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == "wikipedia")
    path = wiki["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["path"]
    assert path.startswith("/") and not path.endswith("/"), path
    sts = next(o for o in objs if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "reddit")
    assert sts["metadata"]["namespace"] == "sitectl-i1"
    pod = sts["spec"]["template"]["spec"]
    assert pod["shareProcessNamespace"] is True
    site, agent = pod["containers"]
    assert site["image"] == "sitectl/mini-postmill:0.1-tiny-s0"
    # Readiness from healthchecks/postmill.yaml's first http ready probe (GET /, via its URL's Host).
    assert site["readinessProbe"]["httpGet"] == {
        "path": "/", "port": 80, "httpHeaders": [{"name": "Host", "value": "reddit.sitectl-i1.svc.cluster.local:10099"}]}
    # The agent: this one site, the pod engine, the same state volume as the site, the token Secret.
    assert agent["args"][:5] == ["sitectl", "cluster", "agent", "--engine", "pod"]
    assert agent["args"][agent["args"].index("--sites") + 1] == "reddit"
    assert {"name": "state", "mountPath": "/var/lib/sitectl"} in site["volumeMounts"]
    assert {"name": "state", "mountPath": "/var/lib/sitectl"} in agent["volumeMounts"]
    assert set(agent["securityContext"]["capabilities"]["add"]) == {"SYS_ADMIN", "SYS_PTRACE"}
    assert {"name": "SITECTL_SITE", "value": "reddit"} in site["env"]  # how the agent finds its site
    assert [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]] == ["state"]
    assert pod["volumes"] == [{"name": "token", "secret": {"secretName": "sitectl-token", "defaultMode": 0o400}}]
    svc = next(o for o in objs if o["kind"] == "Service" and o["metadata"]["name"] == "reddit")
    assert {"name": "p0", "port": 10099, "targetPort": 80} in svc["spec"]["ports"]
    assert {"name": "agent", "port": 9550, "targetPort": 9550} in svc["spec"]["ports"]


def test_pool_deployment_and_secrets(rendered):
    pool = next(o for o in rendered["20-pool.yaml"] if o["kind"] == "Deployment")
    c = pool["spec"]["template"]["spec"]["containers"][0]
    assert c["args"][:4] == ["sitectl", "cluster", "pool", "--k8s"]
    assert c["args"][c["args"].index("--instances") + 1] == "2"
    secrets = rendered["10-secrets.yaml"]
    import base64

    tokens = [o for o in secrets if o["metadata"]["name"] == "sitectl-token"]
    assert sorted(o["metadata"]["namespace"] for o in tokens) == ["sitectl", "sitectl-i0", "sitectl-i1"]
    assert all(base64.b64decode(o["data"]["token"]).decode() == rendered["_token"] for o in tokens)
    accounts = next(o for o in secrets if o["metadata"]["name"] == "sitectl-accounts")["data"]
    assert base64.b64decode(accounts["reddit.default.username"]).decode() == "MarvelsGrantMan136"
    # The Secrets file is the owner's alone; the token appears in no other file.
    d = rendered["_dir"]
    assert stat.S_IMODE((d / "10-secrets.yaml").stat().st_mode) == 0o600
    for f in ("00-namespaces.yaml", "20-pool.yaml", "30-instance-0.yaml", "30-instance-1.yaml"):
        assert rendered["_token"] not in (d / f).read_text()


def test_render_bad_input(tmp_path):
    for opts, what in ((["--namespace", "Prod"], "--namespace 'Prod'"), (["--namespace", "a.b"], "--namespace 'a.b'"),
                       (["--volume-size", "lots"], "--volume-size 'lots'"),
                       (["--reserve-memory", "lots"], "--reserve-memory 'lots'"),
                       (["--storage-class", "Fast_SSD"], "--storage-class 'Fast_SSD'")):
        code, res = cli("k8s", "render", "--instances", "2", "--out", str(tmp_path / "m"), *opts, "--json")
        assert code == 2 and what in res["error"], res
        assert not (tmp_path / "m").exists()  # refused before anything is written
    code, res = cli("k8s", "render", "--instances", "1", "--out", "/proc/nope/m", "--token-file", str(tmp_path / "t"),
                    "--json")
    assert code == 2 and "--out /proc/nope/m: cannot write" in res["error"], res
    code, res = cli("k8s", "render", "--instances", "1", "--out", "/tmp/x", "--sites", "nosuch", "--json")
    assert code == 2 and "unknown site 'nosuch'" in res["error"]
    code, res = cli("k8s", "render", "--instances", "1", "--out", str(tmp_path / "m"), "--sites", " , ", "--json")
    assert code == 2 and "--sites ' , ': name at least one site" in res["error"], res
    assert not (tmp_path / "m").exists()
    code, res = cli("k8s", "render", "--instances", "0", "--out", "/tmp/x", "--json")
    assert code == 2 and "--instances" in str(res)  # click refuses it (0 is not in 1..50)


def test_site_containers_keep_run_from_their_image(rendered):
    # WebArena's Magento and forum images re-initialise their database when /run/mysqld/.init
    # or /run/postgresql/.init is missing (research/real-images.md §1.1; the stack's
    # init_markers): no volume, emptyDir or tmpfs may cover /run in a site's container.
    seen = 0
    for o in _objects(rendered):
        if o["kind"] not in ("StatefulSet", "Deployment"):
            continue
        spec = o["spec"]["template"]["spec"]
        for c in spec["containers"]:
            if c["name"] != "site":  # the agent sidecar and the pool are sitectl's own images
                continue
            seen += 1
            for m in c.get("volumeMounts", []):
                assert not (m["mountPath"] == "/run" or m["mountPath"].startswith("/run/")), (o["metadata"]["name"], m)
    assert seen >= 14  # 7 sites x 2 instances


def test_a_site_with_a_service_container_is_one_pod_with_its_database(tmp_path):
    """VisualWebArena's classifieds: its database is a second container of the site's pod,
    reached as host ``db`` (hostAliases, one network namespace), its data folder an emptyDir
    (a restart keeps it), marked for the agent; the manifests validate strictly."""
    code, res = cli("k8s", "render", "--instances", "1", "--sites", "classifieds", "--out", str(tmp_path / "m"),
                    "--token-file", str(tmp_path / "token"), "--json")
    assert code == 0, res
    objs = list(yaml.safe_load_all((tmp_path / "m" / "30-instance-0.yaml").read_text()))
    for o in objs:
        kubernetes_validate.validate(o, VERSIONS[-1], strict=True)
    sts = next(o for o in objs if o["kind"] == "StatefulSet")
    pod = sts["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["site", "svc-db", "agent"]
    assert pod["shareProcessNamespace"] is True
    assert pod["hostAliases"] == [{"ip": "127.0.0.1", "hostnames": ["db"]}]
    db = pod["containers"][1]
    env = {e["name"]: e["value"] for e in db["env"]}
    assert env["SITECTL_SITE"] == "classifieds" and env["SITECTL_SERVICE"] == "db"
    assert env["MYSQL_DATABASE"] == "osclass" and db["image"].startswith("sitectl/mini-classifieds-db:")
    # Each container requests what Swarm reserves (256 MiB by default).
    assert db["resources"] == pod["containers"][0]["resources"] == {"requests": {"memory": str(256 << 20)}}
    keep = next(m for m in db["volumeMounts"] if m["mountPath"] == "/var/lib/mysql")
    assert {"name": keep["name"], "emptyDir": {}} in pod["volumes"]
    site = pod["containers"][0]
    assert "SITECTL_SERVICE" not in {e["name"] for e in site["env"]}
    agent = pod["containers"][2]
    assert agent["args"][agent["args"].index("--sites") + 1] == "classifieds"
    svc = next(o for o in objs if o["kind"] == "Service")
    assert {p["port"] for p in svc["spec"]["ports"]} == {9980, 9450}
    # The real stack: the database's init folder is a claim of its own.
    code, res = cli("k8s", "render", "--stack", "webarena", "--instances", "1", "--sites", "classifieds", "--out",
                    str(tmp_path / "w"), "--token-file", str(tmp_path / "token"), "--json")
    assert code == 0, res
    objs = list(yaml.safe_load_all((tmp_path / "w" / "30-instance-0.yaml").read_text()))
    sts = next(o for o in objs if o["kind"] == "StatefulSet")
    db = sts["spec"]["template"]["spec"]["containers"][1]
    assert db["image"] == "mysql:8.1"
    assert {"name": "svc-db-data0", "mountPath": "/docker-entrypoint-initdb.d"} in db["volumeMounts"]
    assert "svc-db-data0" in [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]]
    for o in objs:
        kubernetes_validate.validate(o, VERSIONS[-1], strict=True)
