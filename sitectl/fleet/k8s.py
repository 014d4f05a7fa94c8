"""``sitectl k8s render``: Kubernetes manifests for a fleet (docs/cluster.md#kubernetes).

One namespace per instance (``<ns>-i<K>``), so each site is a Service named after it and its
URL is ``http://<site>.<ns>-i<K>.svc.cluster.local:<port>`` (sitectl's per-site host names,
``--site-hosts``); the pool in ``<ns>``. Per instance:

* a **StatefulSet** per stateful site (one with snapshot stores or post-start steps): the site container and the
  reset agent as a sidecar (``sitectl cluster agent --engine pod``) in one pod with
  ``shareProcessNamespace: true``, both mounting the site's **PersistentVolumeClaim** at
  ``/var/lib/sitectl`` (golden copies, staging, the agent's manifests) plus the stack file's own
  volumes; the agent enters the site container's namespaces as ``docker exec`` does
  (:mod:`sitectl.engine.pod`), hence ``SYS_ADMIN`` and ``SYS_PTRACE``;
* a site's **service containers** (the classifieds database) in the same pod, its aliases
  (``db``) in the pod's ``hostAliases`` as 127.0.0.1, an ``emptyDir`` at each ``persist`` path;
* a **Deployment** per stateless site;
* a **Service** per site (its URL port, and the agent's port);
* a memory **request** of ``--reserve-memory`` per site and service container (as Swarm's
  reservation);
* **readiness probes** from ``healthchecks/``: the site's first ready probe of type ``http``
  (``httpGet`` with the ``Host`` header of its URL), else its first ``exec`` one;
* the **Secret** with the token in every namespace, and one with the stack file's accounts.

The pool is a **Deployment** (``sitectl cluster pool --k8s``) with its Service; it reaches each
agent by its Service name. Kubernetes places and restarts the pods; the pool leases, resets
through the agents, and moves leases off an instance whose agents stop answering.
"""
from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from sitectl.errors import UsageError
from sitectl.fleet.naming import agent_port, instance_namespace, instance_target, pod_container, service_name
from sitectl.fleet.spec import POOL_PORT, ClusterSpec
from sitectl.sites.containers import run_spec, service_spec
from sitectl.sites.probes import probes_of
from sitectl.stack import Site
from sitectl.stack.target import Target

#: The agent's state folder in a pod (on the site's PVC, beside the site's own /var/lib/sitectl).
POD_STATE = "/var/lib/sitectl/agent"
TOKEN_SECRET = "sitectl-token"


def _labels(instance: int, site: Site) -> dict:
    return {"app.kubernetes.io/name": service_name(site), "app.kubernetes.io/part-of": "sitectl",
            "sitectl.instance": str(instance)}


def readiness(target: Target, site: Site) -> dict | None:
    """The readiness probe of ``site``'s container from its health-check file, or None."""
    ready = probes_of(target, site, "ready")
    http = next((p for p in ready if p.type == "http"), None)
    base = {"periodSeconds": 5, "failureThreshold": 3, "timeoutSeconds": 5}
    if http is not None:
        url = urlsplit(target.url(site))
        # The same URL sitectl's own probe requests (sitectl/sites/probes.py: base + path).
        full = urlsplit((target.origin(site) if http.from_origin else target.url(site)) + http.path)
        path = (full.path or "/") + (f"?{full.query}" if full.query else "")
        return {"httpGet": {"path": path or "/", "port": target.container_port(site),
                            "httpHeaders": [{"name": "Host", "value": url.netloc}]}, **base}
    ex = next((p for p in ready if p.type == "exec"), None)
    if ex is not None:
        return {"exec": {"command": list(ex.argv)}, **base}
    return None


def _site_container(target: Target, site: Site) -> dict:
    spec = run_spec(target, site)
    c: dict = {"name": "site", "image": spec.image,
               "ports": [{"containerPort": cp, "name": f"p{i}"} for i, (_, _, cp) in enumerate(spec.publish)]}
    if spec.command:
        c["args"] = list(spec.command)  # docker run's command replaces CMD, as args do
    if spec.env:
        c["env"] = [{"name": k, "value": v} for k, v in spec.env.items()]
    probe = readiness(target, site)
    if probe:
        c["readinessProbe"] = probe
    return c


def _volumes(target: Target, site: Site) -> tuple[list[dict], list[str]]:
    """(volumeMounts, claim names) of the stack file's own volumes of ``site``."""
    mounts, claims = [], []
    for i, v in enumerate(site.volumes):
        dst = target.fill(v, site).split(":")[1]
        name = f"data{i}"
        mounts.append({"name": name, "mountPath": dst})
        claims.append(name)
    return mounts, claims


def _requests(reserve: int) -> dict:
    """A container's ``resources``: the memory the fleet reserves per container on Swarm
    (``--reserve-memory``), as a request (no limit)."""
    return {"requests": {"memory": str(reserve)}}


def _service_containers(target: Target, site: Site, reserve: int) -> tuple[list[dict], list[dict], list[str]]:
    """(containers, pod volumes, claim names) of ``site``'s service containers in its pod: the
    same image, command and environment as on one host
    (:func:`sitectl.sites.containers.service_spec`), marked ``SITECTL_SITE`` and
    ``SITECTL_SERVICE`` for the agent; an ``emptyDir`` at each ``persist`` path (a container
    the kubelet restarts keeps it, as ``restart: always`` keeps a container's volumes; the
    agent empties it when it re-creates the site); the stack file's own volumes as claims."""
    containers, volumes, claims = [], [], []
    for k, v in site.services.items():
        spec = service_spec(target, site, k)
        name = pod_container(k)
        c: dict = {"name": name, "image": spec.image}
        if spec.command:
            c["args"] = list(spec.command)
        c["env"] = [*({"name": a, "value": b} for a, b in spec.env.items()),
                    {"name": "SITECTL_SITE", "value": site.name}, {"name": "SITECTL_SERVICE", "value": k}]
        mounts = []
        for i, path in enumerate(v.persist):
            vol = f"{name}-keep{i}"
            volumes.append({"name": vol, "emptyDir": {}})
            mounts.append({"name": vol, "mountPath": path})
        for i, vol in enumerate(spec.volumes):
            claim = f"{name}-data{i}"
            claims.append(claim)
            mounts.append({"name": claim, "mountPath": vol.split(":")[1]})
        if mounts:
            c["volumeMounts"] = mounts
        c["resources"] = _requests(reserve)
        containers.append(c)
    return containers, volumes, claims


def _claim(name: str, size: str, storage_class: str | None) -> dict:
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"metadata": {"name": name}, "spec": spec}


def instance_objects(spec: ClusterSpec, prefix: str, instance: int, storage_class: str | None,
                     volume_size: str) -> list[dict]:
    """The Namespace, workloads and Services of one instance."""
    ns = instance_namespace(prefix, instance)
    t = instance_target(spec, prefix, instance)
    out: list[dict] = []
    for site in spec.chosen_sites(t):
        name, labels = service_name(site), _labels(instance, site)
        site_c = _site_container(t, site)
        site_c["resources"] = _requests(spec.reserve)
        mounts, claims = _volumes(t, site)
        # The agent knows its site's process by this variable (sitectl/engine/pod.py).
        site_c.setdefault("env", []).append({"name": "SITECTL_SITE", "value": site.name})
        ports = [{"name": f"p{i}", "port": t.host_port(site, i), "targetPort": t.container_port(site, i)}
                 for i in range(len(site.container_ports))]
        svc_cs, svc_vols, svc_claims = _service_containers(t, site, spec.reserve)
        if site.stores or site.post_start or site.services:  # state to reset, post-start steps: an agent
            site_c["volumeMounts"] = [{"name": "state", "mountPath": "/var/lib/sitectl"}, *mounts]
            aport = agent_port(instance)
            agent = {
                "name": "agent", "image": spec.agent_image,
                "args": ["sitectl", "cluster", "agent", "--engine", "pod", *spec.args_for([site.name]),
                         "--instance", str(instance), "--host", t.host, "--site-hosts", "--namespace", ns,
                         "--generation", "1", "--port", str(aport)],
                "env": [{"name": "SITECTL_SNAPSHOTS_DIR", "value": f"{POD_STATE}/snapshots"}],
                "ports": [{"containerPort": aport, "name": "agent"}],
                "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "SYS_PTRACE"]}},
                "volumeMounts": [{"name": "state", "mountPath": "/var/lib/sitectl"},
                                 {"name": "token", "mountPath": "/run/secrets/sitectl-token", "subPath": "token",
                                  "readOnly": True}],
            }
            ports.append({"name": "agent", "port": aport, "targetPort": aport})
            # A service's aliases (the classifieds database's ``db``): the pod shares one
            # network namespace, so they name this pod itself.
            aliases = [a for v in site.services.values() for a in v.aliases]
            out.append({
                "apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": name, "namespace": ns, "labels": labels},
                "spec": {
                    "serviceName": name, "replicas": 1, "selector": {"matchLabels": labels},
                    "template": {"metadata": {"labels": labels}, "spec": {
                        "shareProcessNamespace": True,
                        **({"hostAliases": [{"ip": "127.0.0.1", "hostnames": aliases}]} if aliases else {}),
                        "containers": [site_c, *svc_cs, agent],
                        "volumes": [{"name": "token", "secret": {"secretName": TOKEN_SECRET, "defaultMode": 0o400}},
                                    *svc_vols],
                    }},
                    "volumeClaimTemplates": [_claim(c, volume_size, storage_class)
                                             for c in ["state", *claims, *svc_claims]],
                },
            })
        else:
            pod: dict = {"containers": [site_c]}
            if mounts:
                site_c["volumeMounts"] = mounts
                pod["volumes"] = [{"name": c, "persistentVolumeClaim": {"claimName": f"{name}-{c}"}} for c in claims]
                for c in claims:
                    claim = _claim(f"{name}-{c}", volume_size, storage_class)
                    out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                "metadata": {**claim["metadata"], "namespace": ns}, "spec": claim["spec"]})
            out.append({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": name, "namespace": ns, "labels": labels},
                        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                                 "template": {"metadata": {"labels": labels}, "spec": pod}}})
        out.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns, "labels": labels},
                    "spec": {"selector": labels, "ports": ports}})
    return out


def secret_objects(spec: ClusterSpec, prefix: str, token: str) -> list[dict]:
    """The token Secret in every namespace; the stack file's accounts in the pool's."""
    t = spec.target(0, "localhost")
    namespaces = [prefix] + [instance_namespace(prefix, k) for k in range(spec.instances)]
    out = [{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": TOKEN_SECRET, "namespace": ns},
            "data": {"token": base64.b64encode(token.encode()).decode()}} for ns in namespaces]
    accounts = {}
    for site in spec.chosen_sites(t):
        for role, acc in site.accounts.items():
            accounts[f"{site.name}.{role}.username"] = acc.username
            accounts[f"{site.name}.{role}.password"] = acc.password
    out.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": "sitectl-accounts", "namespace": prefix},
                "data": {k: base64.b64encode(v.encode()).decode() for k, v in sorted(accounts.items())}})
    return out


def pool_objects(spec: ClusterSpec, prefix: str) -> list[dict]:
    """The pool: Deployment and Service."""
    labels = {"app.kubernetes.io/name": "sitectl-pool", "app.kubernetes.io/part-of": "sitectl"}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sitectl-pool", "namespace": prefix,
                                                                      "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "strategy": {"type": "Recreate"},
                  "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                      "name": "pool", "image": spec.agent_image,
                      "args": ["sitectl", "cluster", "pool", "--k8s", "--k8s-namespace", prefix, *spec.args(),
                               "--instances", str(spec.instances), "--token-secret", TOKEN_SECRET,
                               "--port", str(POOL_PORT),
                               "--public-url", f"http://sitectl-pool.{prefix}.svc.cluster.local:{POOL_PORT}",
                               *spec.pool_args()],
                      "ports": [{"containerPort": POOL_PORT, "name": "http"}],
                      "readinessProbe": {"tcpSocket": {"port": POOL_PORT}, "periodSeconds": 5},
                      "volumeMounts": [{"name": "token", "mountPath": "/run/secrets/sitectl-token", "subPath": "token",
                                        "readOnly": True}],
                  }], "volumes": [{"name": "token", "secret": {"secretName": TOKEN_SECRET, "defaultMode": 0o400}}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "sitectl-pool", "namespace": prefix, "labels": labels},
         "spec": {"selector": labels, "ports": [{"name": "http", "port": POOL_PORT, "targetPort": POOL_PORT}]}},
    ]


def namespace_objects(spec: ClusterSpec, prefix: str) -> list[dict]:
    """The pool's Namespace and one per instance."""
    names = [prefix] + [instance_namespace(prefix, k) for k in range(spec.instances)]
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"app.kubernetes.io/part-of": "sitectl"}}}
            for n in names]


def check_options(spec: ClusterSpec, namespace: str, storage_class: str | None, volume_size: str) -> None:
    """Refuse options that would make invalid manifests (see :func:`render`).

    Raises:
        UsageError: naming the option.
    """
    room = 63 - len(f"-i{spec.instances - 1}")
    if not re.fullmatch(rf"[a-z0-9]([a-z0-9-]{{0,{room - 2}}}[a-z0-9])?", namespace):
        raise UsageError(f"--namespace {namespace!r}: give lower-case letters, digits and '-' (a DNS-1123 label of "
                         f"at most {room} characters, starting and ending with a letter or digit)")
    if storage_class is not None and not re.fullmatch(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?", storage_class):
        raise UsageError(f"--storage-class {storage_class!r}: not a StorageClass name (DNS-1123 subdomain)")
    if not re.fullmatch(r"[1-9][0-9]*(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?", volume_size):
        raise UsageError(f"--volume-size {volume_size!r}: give a Kubernetes quantity, e.g. 10Gi or 500Mi")


def render(spec: ClusterSpec, token: str, namespace: str = "sitectl", storage_class: str | None = None,
           volume_size: str = "10Gi") -> dict[str, list[dict]]:
    """Every manifest, by file name, in the order to apply them (``kubectl apply -f DIR``
    applies files in name order): ``00-namespaces.yaml``, ``10-secrets.yaml``,
    ``20-pool.yaml``, ``30-instance-<K>.yaml``.

    Raises:
        UsageError: ``namespace`` is not a DNS-1123 label with room for ``-i<K>``,
            ``storage_class`` not a DNS-1123 subdomain, ``volume_size`` not a Kubernetes
            quantity of bytes.
    """
    check_options(spec, namespace, storage_class, volume_size)
    files = {"00-namespaces.yaml": namespace_objects(spec, namespace),
             "10-secrets.yaml": secret_objects(spec, namespace, token),
             "20-pool.yaml": pool_objects(spec, namespace)}
    for k in range(spec.instances):
        files[f"30-instance-{k}.yaml"] = instance_objects(spec, namespace, k, storage_class, volume_size)
    return files


class _Dumper(yaml.SafeDumper):
    """Plain YAML: a repeated mapping (the labels) is written out again, not as an alias."""

    def ignore_aliases(self, data) -> bool:
        return True


def write(spec: ClusterSpec, out_dir: Path, token: str, **kw) -> list[Path]:
    """Write :func:`render`'s files into ``out_dir`` (created; the Secrets file mode 0600).
    Returns the paths."""
    files = render(spec, token, **kw)  # bad options are refused before anything is written
    try:
        return _write(files, out_dir)
    except OSError as e:
        raise UsageError(f"--out {out_dir}: cannot write the manifests: {e.strerror or e}") from None


def _write(files: dict[str, list[dict]], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, objs in files.items():
        p = out_dir / name
        text = yaml.dump_all(objs, Dumper=_Dumper, sort_keys=False)
        if "secret" in name:  # the token: readable by the owner only, from the first byte
            p.unlink(missing_ok=True)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        else:
            p.write_text(text)
        paths.append(p)
    return paths

