"""A client of the reset server's lease API (``sitectl serve`` and the pool ``sitectl cluster deploy`` runs,
docs/serve.md): the one piece the RL adapters (:mod:`sitectl.adapters.nemo_gym`,
:mod:`sitectl.adapters.openenv`) share.

It speaks HTTP only, so it works the same against a local pool and a cluster pool, from another
machine, and from a Python that has none of sitectl's Docker-side dependencies in use. A lease
id is its holder's credential: this module never logs it, and :attr:`HeldLease.tag` is what
others may see (the instance and the id's first 6 characters, as the server's log shows it).
"""
from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import requests
from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

from sitectl.errors import LeaseError, NoInstanceFree, ServerRefused, UsageError

#: What ``GET /l/<lease>/status`` answers (BrowserGym's protocol, docs/serve.md).
READY, ONGOING = "Ready for duty!", "Reset ongoing"
#: The lease fields that are safe to show (everything but the id and the URLs that hold it).
SHOWN = ("instance", "client", "ttl", "expires_in", "since", "failovers", "urls", "env")
#: Largest token file read (bytes); `sitectl serve` writes 43 characters.
TOKEN_MAX = 4096


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line of at most ``limit`` characters (an HTML error page, a traceback)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def shown(lease: dict) -> dict:
    """A lease as the server answers it, without its id and the URLs that hold the id."""
    return {k: lease[k] for k in SHOWN if k in lease}


@dataclass
class HeldLease:
    """One lease this client holds.

    Attributes:
        id: the lease id (the holder's credential: keep it out of logs).
        instance: the instance number leased.
        client: the holder's name as the server shows it.
        ttl: seconds one heartbeat keeps the lease.
        urls: site name to base URL of the leased instance.
        env: WebArena's environment variables for it (``SHOPPING``, ``REDDIT``, ...).
        browsergym_env: BrowserGym's (``WA_SHOPPING``, ..., ``WA_FULL_RESET``).
        healthy: what :meth:`LeaseClient.release` reports unless told otherwise.
        reason: why it is unhealthy, when it is.
    """

    id: str
    instance: int
    client: str
    ttl: float
    urls: dict[str, str]
    env: dict[str, str]
    browsergym_env: dict[str, str]
    healthy: bool = True
    reason: str = ""
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def tag(self) -> str:
        """``i<instance>-<first 6 characters of the id>``: a name safe to log."""
        return f"i{self.instance}-{self.id[:6]}"

    def __repr__(self) -> str:  # the id is a credential
        return f"HeldLease({self.tag}, client={self.client!r})"


def read_token(token: str | None = None, token_file: str | os.PathLike | None = None) -> str:
    """The server token: ``token`` itself, else the first line of ``token_file``, else of
    ``$SITECTL_TOKEN_FILE``.

    Raises:
        UsageError: none given, the file is missing or empty, or others may read it (the server
            refuses such a file too, docs/serve.md).
    """
    if token:
        return token
    path = token_file or os.environ.get("SITECTL_TOKEN_FILE")
    if not path:
        raise UsageError("no server token: give token=, token_file= or $SITECTL_TOKEN_FILE "
                         "(`sitectl serve` writes it to <snapshots dir>/serve-token)")
    p = Path(path)
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"token file {p} is not a regular file")
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise UsageError(f"token file {p} is readable by others (mode {stat.S_IMODE(st.st_mode):o}): chmod 600 it")
        if st.st_size > TOKEN_MAX:
            raise UsageError(f"token file {p} holds {st.st_size} bytes: a token is one short line")
        text = p.read_bytes()[:TOKEN_MAX].decode("utf-8").strip()
    except OSError as e:
        raise UsageError(f"token file {p}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"token file {p} is not UTF-8 text") from None
    token = text.splitlines()[0].strip() if text else ""
    if not token:
        raise UsageError(f"token file {p} is empty")
    if any(c.isspace() or not c.isprintable() for c in token):
        raise UsageError(f"token file {p}: its first line holds spaces or control characters")
    return token


class LeaseClient:
    """Leases instances from a reset server and acts on them through the lease.

    Args:
        url: the server's base URL (``http://127.0.0.1:7565``; its ``--public-url``).
        token: the server token (acquire needs it; every other call uses the lease id).
        token_file: where to read the token instead (see :func:`read_token`).
        client: the holder's name shown on the server's status (at most 80 characters).
        timeout: seconds one HTTP request may take (a reset's wait is longer: see :meth:`reset`).

    Raises:
        UsageError: no usable token (see :func:`read_token`) or a URL that is not http(s).
    """

    def __init__(self, url: str, token: str | None = None, token_file: str | os.PathLike | None = None,
                 client: str = "sitectl-lease-client", timeout: float = 30.0):
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"server URL {url!r}: give http://HOST:PORT")
        self.url = url.rstrip("/")
        self._token = read_token(token, token_file)
        self.client = client[:80]
        self.timeout = timeout
        self._http = requests.Session()

    # -- plumbing ----------------------------------------------------------------------------
    def _call(self, method: str, path: str, *, authed: bool = False, timeout: float | None = None,
              ok: tuple[int, ...] = (200,), **kw) -> requests.Response:
        headers = {"Authorization": f"Bearer {self._token}"} if authed else {}
        try:
            r = self._http.request(method, self.url + path, headers=headers, timeout=timeout or self.timeout, **kw)
        except requests.RequestException as e:
            raise ServerRefused(f"reset server {self.url}: no answer to {method} ({type(e).__name__})") from None
        if r.status_code in ok:
            return r
        try:
            body = r.json()
            why = body.get("error", r.text) if isinstance(body, dict) else r.text
        except ValueError:
            why = r.text
        why = one_line(str(why).replace(self._token, "***"))
        if r.status_code == 404 and "lease" in why:
            raise LeaseError(f"reset server {self.url}: {why}")
        raise ServerRefused(f"reset server {self.url} answered {r.status_code}: {why}", r.status_code)

    def _obj(self, r: requests.Response, *keys: str) -> dict:
        """The JSON object of a 2xx answer, with ``keys`` in it.

        Raises:
            ServerRefused: no JSON object, or one without ``keys`` (not a sitectl server?).
        """
        try:
            body = r.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or any(k not in body for k in keys):
            raise ServerRefused(f"reset server {self.url} answered {r.status_code} with no JSON object "
                                f"of the expected shape (is it a sitectl server?): {one_line(r.text, 120)!r}",
                                r.status_code)
        return body

    @staticmethod
    def _lease_path(lease: HeldLease | str) -> str:
        return quote(lease.id if isinstance(lease, HeldLease) else lease, safe="")

    # -- leases ------------------------------------------------------------------------------
    def acquire(self, ttl: float = 600.0, wait: float = 0.0, keep_alive: bool = True,
                lifetime: float | None = None) -> HeldLease:
        """Lease an idle, golden instance (``POST /api/leases``).

        Args:
            ttl: seconds one heartbeat keeps the lease (0 < ttl <= 86400); the server resets the
                instance when a heartbeat is this late.
            wait: seconds to keep asking (every 0.5 s) while no instance is free.
            keep_alive: send heartbeats (every ttl/3 s, from a daemon thread) until released.
            lifetime: with ``keep_alive``, stop the heartbeats after this many seconds, so the
                server ends the lease at most ``ttl`` s later (None: until released).

        Raises:
            NoInstanceFree: none was free within ``wait`` s.
            ServerRefused: any other refusal (bad token: 401; bad ttl: 400).
        """
        def ask():
            r = self._call("POST", "/api/leases", authed=True, ok=(200, 503),
                           json={"client": self.client, "ttl": ttl})
            return None if r.status_code == 503 else self._obj(r, "lease", "instance", "client", "ttl", "urls",
                                                                "env", "browsergym_env")

        try:
            body = Retrying(stop=stop_after_delay(max(wait, 0.0)), wait=wait_fixed(0.5),
                            retry=retry_if_result(lambda b: b is None))(ask)
        except RetryError:
            body = None
        if body is None:
            raise NoInstanceFree(f"reset server {self.url}: no instance was free within {wait:g} s "
                                 "(all leased, resetting or failed; `sitectl serve` status: GET /api/status)", 503)
        lease = HeldLease(body["lease"], body["instance"], body["client"], body["ttl"], body["urls"],
                          body["env"], body["browsergym_env"])
        if keep_alive:
            threading.Thread(target=self._keep, args=(lease, lifetime), daemon=True,
                             name=f"heartbeat-{lease.tag}").start()
        return lease

    def _keep(self, lease: HeldLease, lifetime: float | None) -> None:
        every = max(lease.ttl / 3, 0.2)
        waited = 0.0
        while not lease._stop.wait(every):
            waited += every
            if lifetime is not None and waited >= lifetime:
                return
            try:
                self.heartbeat(lease)
            except LeaseError:
                return  # ended (released elsewhere, or reaped): nothing to keep
            except ServerRefused:
                continue  # a missed beat; the next one may get through within the ttl

    def heartbeat(self, lease: HeldLease | str) -> None:
        """Extend the lease by its ttl from now.

        Raises:
            LeaseError: the lease ended (released, or its heartbeat came too late).
        """
        self._call("POST", f"/api/leases/{self._lease_path(lease)}/heartbeat", authed=True)

    def release(self, lease: HeldLease, healthy: bool | None = None, reason: str | None = None,
                diff: bool = False) -> dict:
        """End the lease (``DELETE /api/leases/<id>``). Healthy: the server resets the instance
        for the next holder. Not healthy: the server marks it ``failed`` with ``reason`` and
        leases it to nobody until an operator's reset (docs/serve.md).

        Args:
            healthy: default ``lease.healthy``.
            reason: default ``lease.reason``.
            diff: also return the episode's diff (read before the reset).

        Returns:
            The server's answer: ``{"released", "instance", "state"[, "diff"]}``.

        Raises:
            LeaseError: the lease had ended already.
        """
        lease._stop.set()
        healthy = lease.healthy if healthy is None else healthy
        params = {"healthy": "1" if healthy else "0"}
        if not healthy:
            params["reason"] = (lease.reason if reason is None else reason)[:300]
        if diff:
            params["diff"] = "1"
        return self._obj(self._call("DELETE", f"/api/leases/{self._lease_path(lease)}", authed=True, params=params,
                                    timeout=max(self.timeout, 120)), "released")

    def info(self, lease: HeldLease) -> dict:
        """The lease as the server has it now (``GET /api/leases/<id>``): instance, client,
        ttl, ``expires_in``, since, failovers (a cluster pool may move it), URLs and WebArena's
        variables; not its id, nor the URLs that hold it (:func:`shown`).

        Raises:
            LeaseError: the lease ended.
        """
        return shown(self._obj(self._call("GET", f"/api/leases/{self._lease_path(lease)}"), "instance"))

    def status(self, lease: HeldLease) -> str:
        """The leased instance's state: ``ready``, ``resetting`` or ``failed: <error>``.

        Raises:
            LeaseError: the lease ended.
        """
        r = self._call("GET", f"/l/{self._lease_path(lease)}/status", ok=(200, 500))
        if r.status_code == 500 and r.text.startswith("Reset failed: "):
            return "failed: " + one_line(r.text.removeprefix("Reset failed: "))
        if r.status_code == 200 and r.text in (READY, ONGOING):
            return "ready" if r.text == READY else "resetting"
        raise ServerRefused(f"reset server {self.url} answered {r.status_code} {one_line(r.text, 120)!r} to a "
                            "status poll (BrowserGym's protocol answers Ready for duty! or Reset ongoing)", r.status_code)

    def reset(self, lease: HeldLease, wait: float = 600.0) -> str:
        """Reset the leased instance to golden and wait until it is done (``GET /l/<id>/reset``,
        then ``/status`` every 0.2 s). Returns ``ready``.

        Raises:
            ServerRefused: the reset failed (the server's error), or was still running after
                ``wait`` s.
        """
        self._call("GET", f"/l/{self._lease_path(lease)}/reset", ok=(200, 418), timeout=max(self.timeout, wait))
        try:
            state = Retrying(stop=stop_after_delay(wait), wait=wait_fixed(0.2),
                             retry=retry_if_result(lambda s: s == "resetting"))(self.status, lease)
        except RetryError:
            raise ServerRefused(f"reset of {lease.tag} still running after {wait:g} s") from None
        if state != "ready":
            raise ServerRefused(f"reset of {lease.tag} {state}", 500)
        return state

    def diff(self, lease: HeldLease) -> dict:
        """What the episode changed since golden (docs/diff.md's JSON).

        Raises:
            ServerRefused: 409 while the instance resets, or a site keeps no change log.
        """
        return self._obj(self._call("GET", f"/l/{self._lease_path(lease)}/diff", timeout=max(self.timeout, 120)))

    def checkpoint(self, lease: HeldLease, op: str, name: str | None = None) -> dict:
        """A checkpoint of the leased instance (docs/checkpoints.md): ``op`` ``save``,
        ``restore``, ``delete`` (each with ``name``) or ``list``. The server deletes the lease's
        checkpoints when the lease ends.

        Raises:
            UsageError: an unknown op, or a name missing or not ``[A-Za-z0-9_]{1,64}``.
            ServerRefused: 404 no such checkpoint, 409 none can be kept or brought back exactly.
        """
        base = f"/l/{self._lease_path(lease)}/checkpoints"
        if op == "list":
            return self._obj(self._call("GET", base), "checkpoints")
        if op not in ("save", "restore", "delete"):
            raise UsageError(f"checkpoint operation {op!r}: give save, restore, delete or list")
        if not name or not name.isascii() or not name.replace("_", "").isalnum() or len(name) > 64:
            raise UsageError(f"checkpoint name {name!r}: give 1-64 letters, digits or _")
        long = max(self.timeout, 600)
        if op == "save":
            return self._obj(self._call("POST", f"{base}/{name}", timeout=long))
        if op == "restore":
            return self._obj(self._call("POST", f"{base}/{name}/restore", timeout=long))
        return self._obj(self._call("DELETE", f"{base}/{name}", timeout=long))

    def close(self) -> None:
        """Close the HTTP connections (held leases stay: release them first)."""
        self._http.close()
