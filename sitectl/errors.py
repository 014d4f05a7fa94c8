"""Every error sitectl raises on purpose. Each carries one clear, user-facing message, and the
CLI exits with its ``exit_code``.

The tree (exit code in brackets)::

    SitectlError [1]
    ├── StackError [2]            a stack or health-check file is invalid
    ├── UsageError [2]            bad input: a site, option, snapshot name, file
    ├── LeaseError [2]            unknown or expired lease id
    ├── EngineError [3]           the engine is missing, stopped, or refused
    │   ├── EngineGone [3]        ... it stopped answering in the middle of an operation
    │   ├── ImageMissing [3]      ... an image is absent
    │   ├── PortInUse [3]         ... a host port is taken
    │   └── ContainerExited [3]   ... a container stopped during start
    ├── NoNodeFits [3]            no cluster node can take an instance
    ├── StepFailed [4]            a post-start step exited non-zero
    ├── SiteUnhealthy [5]         a site answered 5xx, timed out or refused
    │   └── ProbeTimeout [5]      ... a health probe never settled
    ├── LoginError [6]            a site refused the credentials
    ├── LoginsFailed [6]          ``login`` left a site not logged in
    ├── VerifyFailed [7]          ``verify`` found a failing check
    ├── PreflightFailed [8]       a task cannot be prepared as given
    ├── StoreError [9]            a store could not snapshot, detect, restore or fingerprint
    │   ├── NotCovered [9]        ... a snapshot has no complete copy of a site
    │   ├── WrittenDuringReset [9] ... the site kept being written while it was reset
    │   ├── DiffUnavailable [9]   ... no change log relative to the snapshot a diff asks for
    │   └── CheckpointUnavailable [9] ... a checkpoint cannot be kept or brought back exactly
    ├── LocatorError [9]          a locator could not read what it was asked for
    ├── InstanceBusy [10]         another process holds the instance's lock, or a server leased it
    ├── DamagedRecord [11]        a record of sitectl's on the host (a snapshot manifest) is damaged
    ├── DoctorFailed [12]         a container lacks what its stack file and stores assume (``doctor``)
    └── ServerRefused [13]        a reset server answered a lease client with an error
        └── NoInstanceFree [13]   ... no instance was free within the wait

An interrupt exits 130 (``docs/cli.md``, exit codes).
"""
from __future__ import annotations


class SitectlError(Exception):
    """Base of sitectl's own errors; the CLI prints the message and exits with ``exit_code``."""

    exit_code = 1


class StackError(SitectlError):
    """A stack file is invalid. The message names the file, line, site and field."""

    exit_code = 2


class UsageError(SitectlError):
    """Bad command-line input (an unknown site name, a bad option value)."""

    exit_code = 2


class EngineError(SitectlError):
    """The Docker engine is missing, not running, or refused an operation."""

    exit_code = 3


class EngineGone(EngineError):
    """The engine stopped answering in the middle of an operation; the message names the next
    step (start it again, then repeat the command: a reset's journal finishes the work)."""


class ImageMissing(EngineError):
    """An image a site needs is not present; the message names the load or build step."""


class PortInUse(EngineError):
    """A host port a site publishes is taken by another process or container."""


class ContainerExited(EngineError):
    """A container stopped during start; the message carries its last log lines."""


class StepFailed(SitectlError):
    """A post-start step exited non-zero; the message names the site, step and output."""

    exit_code = 4


class SiteUnhealthy(SitectlError):
    """A site answered 5xx, timed out or refused the connection."""

    exit_code = 5

    def __init__(self, site: str, detail: str, retry_after: float | None = None):
        self.site = site
        self.detail = detail
        #: Seconds the site asked to wait (a 429's Retry-After), or None.
        self.retry_after = retry_after
        super().__init__(f"{site}: unhealthy: {detail}")


class ProbeTimeout(SiteUnhealthy):
    """A health probe never passed in time; the message names the probe and its last response."""


class LoginError(SitectlError):
    """A site refused the credentials (wrong user or password)."""

    exit_code = 6

    def __init__(self, site: str, detail: str):
        self.site = site
        self.detail = detail
        super().__init__(f"{site}: login failed: {detail}")


class NoLoginForm(LoginError):
    """The site answered, but not with its login form where the driver expects it (a wrong base
    URL, another application on the port, a page the site changed): no credentials were sent,
    so none were refused (``sitectl login`` reports ``no_login_form``)."""


class LoginNotApplied(LoginError):
    """The login form accepted the account, but no session came of it (no session cookie, or the
    site still shows the login): ``sitectl login`` reports ``login_not_applied``."""


class VerifyFailed(SitectlError):
    """``sitectl verify`` found at least one failing check."""

    exit_code = 7


class LoginsFailed(SitectlError):
    """``sitectl login`` (or ``--check``) left a site not logged in; ``payload`` holds the
    per-site and per-file outcomes."""

    exit_code = 6

    @classmethod
    def from_result(cls, res: dict, prefix: str = "not logged in", extra: list[str] = ()) -> "LoginsFailed":
        """The error for a login result ``res`` (``{"sites" or "files": [{"site", "state",
        "detail"}]}``): ``"<prefix>: site: state (detail); ..."``, with ``res`` as payload."""
        rows = res.get("sites", res.get("files", []))
        bad = [f"{r['site']}: {r['state']} ({r['detail']})" for r in rows if r["state"] != "logged_in"]
        err = cls(f"{prefix}: " + "; ".join(bad + list(extra)))
        err.payload = res
        return err


class LeaseError(SitectlError):
    """Unknown or expired lease id."""

    exit_code = 2


class NoNodeFits(SitectlError):
    """No ready, active node has the labels and free memory an instance needs."""

    exit_code = 3


class PreflightFailed(SitectlError):
    """A task cannot be prepared as given; ``problems`` lists every reason."""

    exit_code = 8

    def __init__(self, problems: list[str]):
        super().__init__("preflight failed:\n" + "\n".join(f"  {p}" for p in problems))
        self.problems = problems


class StoreError(SitectlError):
    """A store could not snapshot, detect, restore or fingerprint; the message names it."""

    exit_code = 9


class NotCovered(StoreError):
    """Snapshot ``name`` has no complete copy of a site: its manifest does not list the site
    (a snapshot of it failed or was interrupted, and its copies were dropped from the manifest
    before they were touched)."""


class WrittenDuringReset(StoreError):
    """The site was written to while it was reset: what changed before the reset began was
    restored, what came during it is still logged (the next reset undoes it). Not a broken
    restore: the reset does not escalate to a full restore or a re-create for it."""


class JobsPauseFailed(StoreError):
    """A site's background jobs (``jobs.pause`` of the stack file) would not pause: nothing was
    copied or restored (a reset is not safe while they write, and re-creating the site would
    not make them pause). Not escalated."""


class DiffUnavailable(StoreError):
    """A site's change log is not relative to the snapshot a diff was asked against (the log
    follows the last snapshot taken or restored in full), so no exact diff can be read."""


class CheckpointUnavailable(StoreError):
    """A checkpoint cannot be saved or restored exactly (the change log does not follow golden,
    the schema changed since golden, a store keeps no checkpoints); the message says what to do."""


class LocatorError(SitectlError):
    """A locator could not read what it was asked for (site answered an error, no such row)."""

    exit_code = 9


class InstanceBusy(SitectlError):
    """Another process holds the instance's lock (``--no-wait``), or a reset server has leased the
    instance to a client (``sitectl reset --force`` overrides)."""

    exit_code = 10


class DamagedRecord(SitectlError):
    """A record sitectl keeps on the host (a snapshot manifest) is unreadable or of the wrong
    shape. It is never rewritten or read as something else; the message names the file, the
    fault and the repair."""

    exit_code = 11


class DoctorFailed(SitectlError):
    """``sitectl doctor`` (or ``up`` before it takes golden) found a site's container lacking
    what its stack file and stores assume; ``report`` holds the whole report, the message every
    failed check with its fix."""

    exit_code = 12

    def __init__(self, report: dict, lines: list[str]):
        super().__init__("doctor found what would make golden wrong or a reset fail:\n"
                         + "\n".join(f"  {x}" for x in lines)
                         + "\n(the whole report: sitectl doctor --json; share it when asking for help)")
        self.report = report
        self.payload = report


class ServerRefused(SitectlError):
    """A reset server (``sitectl serve``, the pool ``sitectl cluster deploy`` runs) answered a request of a
    lease client (:mod:`sitectl.adapters.lease_client`) with an error; ``status`` is the HTTP
    status (0: no answer), the message the server's own words."""

    exit_code = 13

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


class NoInstanceFree(ServerRefused):
    """Every instance of the pool stayed leased, resetting or failed for the whole wait."""
