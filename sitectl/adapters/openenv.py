"""An OpenEnv environment whose episodes are leases of a sitectl reset server.

OpenEnv (``pip install openenv-core``, 0.3.0 and later) serves an ``Environment`` subclass
(``openenv.core.env_server.interfaces``: ``reset``, ``step``, ``state``, ``close``) over HTTP
and WebSocket with ``create_app`` / ``create_fastapi_app``, one environment object per client
session, and its ``EnvClient`` / ``GenericEnvClient`` drive it. Here one episode is one lease:

- ``reset()`` releases the session's lease, if any (healthy: the server resets that instance
  behind it), and leases an idle, golden instance; the observation carries its site URLs and
  WebArena's environment variables, which the agent's browser uses;
- ``step(SiteAction(op=...))`` runs a state operation on the lease: ``diff``, ``checkpoint_save``,
  ``checkpoint_restore``, ``checkpoint_delete``, ``checkpoints``, ``reset``, ``lease``, or
  ``release`` (with ``healthy`` and ``reason``), which ends the episode (``done``);
- ``close()`` releases a lease still held.

The web actions themselves (clicks, typing) are the browser's, outside this environment. Serve
it with OpenEnv's own server::

    from openenv.core.env_server import create_fastapi_app
    from sitectl.adapters.openenv import SiteAction, SiteObservation, SitectlEnvironment
    app = create_fastapi_app(SitectlEnvironment.factory("http://127.0.0.1:7565", token_file="..."),
                             SiteAction, SiteObservation, max_concurrent_envs=4)

Importing this module needs ``openenv-core`` (``pip install 'sitectl[openenv]'``).
"""
from __future__ import annotations

import functools
import os
import uuid
from typing import Any, Literal

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from sitectl.adapters.lease_client import HeldLease, LeaseClient
from sitectl.errors import LeaseError, SitectlError

Op = Literal["diff", "checkpoint_save", "checkpoint_restore", "checkpoint_delete", "checkpoints", "reset",
             "lease", "release"]


class SiteAction(Action):
    """A state operation on the episode's lease (the web actions are the browser's)."""

    op: Op = Field(description="diff | checkpoint_save | checkpoint_restore | checkpoint_delete | checkpoints | "
                               "reset | lease | release")
    name: str | None = Field(default=None, description="the checkpoint's name (checkpoint_* ops)")
    healthy: bool = Field(default=True, description="release: False marks the instance failed, not reset")
    reason: str = Field(default="", max_length=300, description="release: why it is unhealthy")


class SiteObservation(Observation):
    """The episode's instance and the last operation's answer."""

    instance: int | None = Field(default=None, description="the leased instance number")
    urls: dict[str, str] = Field(default_factory=dict, description="site name -> base URL")
    env: dict[str, str] = Field(default_factory=dict, description="WebArena's environment variables")
    result: Any = Field(default=None, description="the operation's JSON answer (docs/rl-adapters.md)")
    error: str | None = Field(default=None, description="why the operation failed, when it did")


class SiteState(State):
    """The episode's lease as OpenEnv's ``state`` shows it (the lease id is not shown)."""

    instance: int | None = None
    lease_tag: str | None = Field(default=None, description="i<instance>-<first 6 characters of the lease id>")
    urls: dict[str, str] = Field(default_factory=dict)


class SitectlEnvironment(Environment[SiteAction, SiteObservation, SiteState]):
    """OpenEnv's ``Environment`` over a sitectl reset server (one lease per episode).

    Args:
        url: the reset server's base URL (default ``$SITECTL_SERVER_URL``).
        token: the server token; or ``token_file`` (or ``$SITECTL_TOKEN_FILE``).
        client: the holder's name on the server's status page.
        ttl: seconds a heartbeat keeps the lease (heartbeats run while the episode lasts).
        wait: seconds ``reset`` waits for a free instance.

    Raises:
        UsageError: no server URL, no usable token.
    """

    #: Each session holds its own lease, so sessions never share an instance.
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, url: str | None = None, token: str | None = None, token_file: str | None = None,
                 client: str = "openenv", ttl: float = 120.0, wait: float = 600.0):
        super().__init__()
        url = url or os.environ.get("SITECTL_SERVER_URL", "")
        self._leases = LeaseClient(url, token, token_file, client=client)
        self.ttl, self.wait = float(ttl), float(wait)
        self._lease: HeldLease | None = None
        self._state = SiteState()

    @classmethod
    def factory(cls, url: str, **kw) -> functools.partial:
        """A factory for OpenEnv's ``create_app`` / ``create_fastapi_app`` (one object per
        session; constructing one leases nothing)."""
        return functools.partial(cls, url, **kw)

    def _observe(self, result: Any = None, error: str | None = None, done: bool = False) -> SiteObservation:
        lease = self._lease
        return SiteObservation(instance=lease.instance if lease else None, urls=lease.urls if lease else {},
                               env=lease.env if lease else {}, result=result, error=error, done=done)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> SiteObservation:
        """Start an episode on a golden instance (the previous one's lease is released healthy).

        Raises:
            NoInstanceFree: none was free within ``wait`` s.
            ServerRefused: the server refused the lease.
        """
        self._end(True, "")
        self._lease = self._leases.acquire(self.ttl, self.wait)
        self._state = SiteState(episode_id=episode_id or str(uuid.uuid4()), step_count=0,
                                instance=self._lease.instance, lease_tag=self._lease.tag, urls=self._lease.urls)
        return self._observe()

    def step(self, action: SiteAction, timeout_s: float | None = None, **kwargs: Any) -> SiteObservation:
        """Run ``action`` on the episode's lease. A failure is the observation's ``error`` (the
        episode goes on), except that a lease the server ended (missed heartbeats) ends it."""
        self._state.step_count += 1
        lease = self._lease
        if lease is None:
            return self._observe(error="no episode: call reset() first", done=True)
        c = self._leases
        try:
            if action.op == "release":
                res = self._end(action.healthy, action.reason)
                return SiteObservation(instance=lease.instance, result=res, done=True)
            if action.op == "diff":
                res = c.diff(lease)
            elif action.op == "checkpoints":
                res = c.checkpoint(lease, "list")
            elif action.op.startswith("checkpoint_"):
                res = c.checkpoint(lease, action.op.removeprefix("checkpoint_"), action.name)
            elif action.op == "reset":
                res = {"state": c.reset(lease)}
            else:  # lease: without its id (lease_client.shown)
                res = c.info(lease)
        except LeaseError as e:
            self._lease = None
            return SiteObservation(instance=lease.instance, error=str(e), done=True)
        except SitectlError as e:
            return self._observe(error=str(e))
        return self._observe(res)

    @property
    def state(self) -> SiteState:
        """The episode: its id, step count, instance and lease tag."""
        return self._state

    def _end(self, healthy: bool, reason: str) -> dict | None:
        lease, self._lease = self._lease, None
        if lease is None:
            return None
        try:
            return self._leases.release(lease, healthy, reason)
        except LeaseError:
            return None  # ended already (its heartbeats stopped): the server reset it

    def close(self) -> None:
        """Release a lease still held (healthy) and close the connections."""
        try:
            self._end(True, "")
        finally:
            self._leases.close()
