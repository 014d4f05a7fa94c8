"""Logged-in browser states: Playwright storage-state files made by HTTP form login.

WebArena's ``browser_env/auto_login.py`` logs into each site with a headless browser and saves
``context.storage_state()`` as ``<site>[.<site>]_state.json`` (research/webarena-official.md
§3.2). sitectl makes the same files with the sites' own login forms over HTTP (``requests``,
each driver's CSRF or form-key handling), no browser needed, and checks them with WebArena's
logged-in probes.

File names and pairs (``auto_login.main()``): one file per site (``gitlab``, ``shopping``,
``shopping_admin``, ``reddit``) and the pairs ``gitlab.reddit``, ``gitlab.shopping``,
``gitlab.shopping_admin``, ``shopping.shopping_admin``. WebArena skips the forum paired with
either shop: on one host name their session cookies collide (cookies are scoped to the host, not
the port). A pair is written only when its cookies do not collide.

Files are written atomically (a temporary file in the same folder, then ``os.replace``) with
mode 0600; a site whose login fails leaves no file of its own behind (a stale one is removed).
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import requests
from requests.cookies import create_cookie

from sitectl import http
from sitectl.errors import LoginError, LoginNotApplied, NoLoginForm, SitectlError, SiteUnhealthy, UsageError
from sitectl.ops.task_formats import site_comb_from_state_path
from sitectl.paths import instance_dir
from sitectl.progress import QUIET, Reporter
from sitectl.sites import driver_for
from sitectl.sites.base import DRIVERS, THROTTLE_WAIT, retry_wait
from sitectl.stack import Site
from sitectl.stack.target import Target

#: The sites WebArena makes states for, and the pairs it makes (auto_login.py ``main()``:
#: ``combinations(SITES, 2)``, names sorted, skipping the forum with either shop).
STATE_SITES = ("gitlab", "shopping", "shopping_admin", "reddit")
PAIRS = (("gitlab", "reddit"), ("gitlab", "shopping"), ("gitlab", "shopping_admin"), ("shopping", "shopping_admin"))
#: The pairs WebArena skips ("auth don't work"): on one host name the forum's and the shop's
#: ``PHPSESSID`` collide. Made when the two sites have their own host names (``--site-hosts``),
#: under the names WebArena's ``renew_comb(sorted(pair))`` would give them.
FORUM_SHOP_PAIRS = (("reddit", "shopping"), ("reddit", "shopping_admin"))


def pairs_for(target: Target) -> list[tuple[tuple[str, str], str | None]]:
    """Every pair of state sites with None, or with the reason it cannot be made: WebArena's
    four always; the forum with either shop only where their host names differ."""
    out: list[tuple[tuple[str, str], str | None]] = [(p, None) for p in PAIRS]
    for pair in FORUM_SHOP_PAIRS:
        a, b = (target.stack.sites.get(s) for s in pair)
        same = a is not None and b is not None and target.site_host(a) == target.site_host(b)
        out.append((pair, (
            f"one host name ({target.site_host(a)}) for both: their PHPSESSID cookies would collide "
            "(cookies are scoped to the host, not the port); give each site its own host name with --site-hosts"
        ) if same else None))
    return out
DEFAULT_ROLE = "default"


def state_file_name(sites: tuple[str, ...] | list[str]) -> str:
    """WebArena's file name of a state: ``gitlab.reddit_state.json`` (sites as given, joined
    with ``.``). Its parser takes ``basename.rsplit("_", 1)[0].split(".")``."""
    return ".".join(sites) + "_state.json"


def out_dir(out: Path | None, role: str, instance: int = 0) -> Path:
    """Folder of the state files: ``out`` for the default role, ``out/<role>`` for any other
    role (same file names there). ``out`` defaults to ``./.auth`` (WebArena's ``auth_folder``)
    for instance 0 and ``./.auth-i<N>`` for instance N, so instances never share states."""
    base = Path(out) if out is not None else Path(".auth" if instance == 0 else f".auth-i{instance}")
    return base if role == DEFAULT_ROLE else base / role


# -- storage-state JSON ----------------------------------------------------------------------
def _rest(c, key: str) -> str | None:
    for k, v in getattr(c, "_rest", {}).items():
        if k.lower() == key.lower():
            return v if v is not None else ""
    return None


def cookies_to_state(jar, host: str) -> list[dict]:
    """The cookies of ``jar`` in Playwright's storage-state shape: ``{"name", "value",
    "domain", "path", "expires" (epoch seconds, -1 for a session cookie), "httpOnly",
    "secure", "sameSite"}``. ``domain`` is the bare host name with no port (a cookie set for
    a host without a dot is stored by Python as ``host.local``; it is written back as ``host``).
    """
    out = []
    for c in jar:
        domain = c.domain
        if domain.endswith(".local") and "." not in host and domain[:-6].lstrip(".") == host:
            domain = host
        same = (_rest(c, "SameSite") or "Lax").capitalize()
        out.append({"name": c.name, "value": c.value or "", "domain": domain, "path": c.path or "/",
                    "expires": float(c.expires) if c.expires else -1, "httpOnly": _rest(c, "HttpOnly") is not None,
                    "secure": bool(c.secure), "sameSite": same if same in ("Strict", "Lax", "None") else "Lax"})
    return sorted(out, key=lambda x: (x["domain"], x["path"], x["name"]))


def session_from_state(state: dict) -> requests.Session:
    """A ``requests`` session holding a storage state's cookies (to probe it over HTTP)."""
    s = http.new_session()
    for c in state.get("cookies", []):
        exp = c.get("expires", -1)
        s.cookies.set_cookie(create_cookie(c["name"], c["value"], domain=c["domain"], path=c.get("path", "/"),
                                           expires=None if exp in (-1, None) else int(exp),
                                           secure=bool(c.get("secure")),
                                           rest={"HttpOnly": None} if c.get("httpOnly") else {}))
    return s


def write_state(path: Path, state: dict) -> None:
    """Write ``state`` as JSON to ``path`` atomically with mode 0600 (a reader sees the old
    file or the new one, never half of it; the file is never readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def merge_states(states: list[tuple[dict, tuple[str, ...]]]) -> tuple[dict | None, list[str]]:
    """One storage state holding the cookies of all ``states`` (each with the names of its
    site's login cookies), or None and the colliding login cookies: the same name, domain and
    path from two sites, of which a browser would keep only one. Other cookies that repeat
    (e.g. Magento's ``private_content_version``) keep the later value, as a browser logging
    into the sites one after the other would."""
    owner: dict[tuple, int] = {}
    merged: dict[tuple, dict] = {}
    clash = []
    for i, (st, login_names) in enumerate(states):
        for c in st["cookies"]:
            key = (c["name"], c["domain"], c["path"])
            if key in owner and owner[key] != i and (c["name"] in login_names or key in _login_keys(states, owner[key])):
                clash.append(f"{c['name']} ({c['domain']}{c['path']})")
            owner[key] = i
            merged[key] = c
    if clash:
        return None, sorted(set(clash))
    return {"cookies": sorted(merged.values(), key=lambda x: (x["domain"], x["path"], x["name"])), "origins": []}, []


def _login_keys(states, i: int) -> set[tuple]:
    st, names = states[i]
    return {(c["name"], c["domain"], c["path"]) for c in st["cookies"] if c["name"] in names}


# -- login -----------------------------------------------------------------------------------
@dataclass
class SiteLogin:
    """Outcome of logging one site in.

    Attributes:
        site: site name. role: the account's role. username: the account's user name.
        state: ``logged_in``, ``wrong_credentials`` (the site refused the account),
            ``no_login_form`` (the site answered without its login form: nothing was sent),
            ``login_not_applied`` (the form was accepted but no session came of it, or the
            probe right after it shows the login page), or ``unhealthy`` (5xx, timeout,
            connection error).
        detail: one line of explanation. seconds: time taken.
    """

    site: str
    role: str
    username: str
    state: str
    detail: str = ""
    seconds: float = 0.0
    storage: dict | None = field(default=None, repr=False)
    session_cookies: tuple[str, ...] = field(default=(), repr=False)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("storage")
        d.pop("session_cookies")
        return d


def login_site(target: Target, site: Site, role: str = DEFAULT_ROLE, attempts: int = 4) -> SiteLogin:
    """Log ``site`` in by HTTP form with the account of ``role`` and return its storage state.

    A site that is unhealthy (5xx, 429, timeout) is tried ``attempts`` times with growing
    waits (a 429's ``Retry-After``, at most :data:`sitectl.sites.base.THROTTLE_WAIT` s) before it is reported ``unhealthy``; refused credentials are never retried (retries
    would lock the account: GitLab locks after 10 failures, Magento admin after 6).

    Raises:
        UsageError: the site has no login or no account of ``role``.
    """
    t0 = time.monotonic()
    try:
        account = site.account(role)
    except KeyError as e:
        raise UsageError(str(e.args[0])) from None
    base = target.url(site)
    drv = driver_for(site.kind.value, base)
    if not drv.has_login:
        raise UsageError(f"site {site.name!r} has no login")
    res = SiteLogin(site.name, role, account.username, "unhealthy", session_cookies=drv.session_cookies)
    asked = 0.0  # what a throttled site asked to wait (Retry-After), at most THROTTLE_WAIT
    for i in range(attempts):
        time.sleep(max(retry_wait(i), asked))
        asked = 0.0
        session = drv.new_session()
        try:
            drv.login(session, account)
        except SiteUnhealthy as e:
            res.detail = f"unhealthy: {e.detail}" + (f" (after {i + 1} tries)" if i else "")
            asked = min(e.retry_after or 0.0, THROTTLE_WAIT) if i + 1 < attempts else 0.0
            continue
        except NoLoginForm as e:
            res.state, res.detail = "no_login_form", e.detail
            break
        except LoginNotApplied as e:
            res.state, res.detail = "login_not_applied", e.detail
            break
        except LoginError as e:
            res.state, res.detail = "wrong_credentials", e.detail
            break
        check = drv.check_session(session, account)
        if check.state == "logged_in":
            res.state, res.detail = "logged_in", check.detail
            res.storage = {"cookies": cookies_to_state(session.cookies, urlsplit(base).hostname or ""), "origins": []}
        elif check.state == "logged_out":
            res.state = "login_not_applied"
            res.detail = f"the login form was accepted, but the probe right after it is logged out: {check.detail}"
        else:
            res.detail = f"unhealthy after the login: {check.detail}"
            continue
        break
    res.seconds = round(time.monotonic() - t0, 3)
    return res


def _chosen(target: Target, sites: list[Site], role: str, explicit: bool) -> list[Site]:
    out = []
    for s in sites:
        has_login = DRIVERS[s.kind.value].has_login
        if not has_login or role not in s.accounts:
            if explicit:
                if not has_login:
                    raise UsageError(f"site {s.name!r} has no login")
                raise UsageError(f"site {s.name!r} has no account for role {role!r} (roles: {', '.join(s.accounts) or 'none'})")
            continue
        out.append(s)
    if not out:
        raise UsageError(f"no site has an account for role {role!r}")
    return out


def login(target: Target, sites: list[Site], role: str = DEFAULT_ROLE, out: Path | None = None,
          explicit: bool = False, reporter: Reporter = QUIET, remember: bool = True) -> dict:
    """Log ``sites`` in (all at once) and write their storage-state files, plus WebArena's
    pairs among them whose cookies do not collide.

    Args:
        sites: the sites to log in; with ``explicit`` False (``--all``), those without a login
            or without an account of ``role`` are left out instead of refused.
        out: folder (see :func:`out_dir`).
        remember: record the folder so that ``sitectl reset`` rebuilds its states (False for
            a temporary folder or states made for one task).

    Returns:
        ``{"folder", "role", "sites": [SiteLogin as dict], "files": [{"file", "sites"}],
        "skipped_pairs": [{"pair", "reason"}], "seconds", "ok"}``; ``ok`` is False when a site
        did not log in (its files are removed, none is left stale).

    Raises:
        UsageError: a named site has no login or no account of ``role``.
    """
    t0 = time.monotonic()
    chosen = _chosen(target, sites, role, explicit)
    folder = out_dir(out, role, target.instance)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(chosen)) as pool:
        results = list(pool.map(lambda s: login_site(target, s, role), chosen))
    by = {r.site: r for r in results}
    files, skipped = [], []
    for r in results:
        reporter.step(r.site, f"{r.state}: {r.detail}")
    good = {r.site for r in results if r.storage is not None}
    for r in results:
        p = folder / state_file_name([r.site])
        if r.site in good:
            write_state(p, r.storage)
            files.append({"file": str(p), "sites": [r.site]})
    for pair, cannot in pairs_for(target):
        if not all(s in by for s in pair):
            continue
        p = folder / state_file_name(pair)
        if cannot:
            p.unlink(missing_ok=True)
            skipped.append({"pair": list(pair), "reason": cannot})
            continue
        if not all(s in good for s in pair):
            p.unlink(missing_ok=True)  # no stale pair file of a site that failed
            continue
        merged, clash = merge_states([(by[s].storage, by[s].session_cookies) for s in pair])
        if merged is None:
            p.unlink(missing_ok=True)
            skipped.append({"pair": list(pair), "reason": "cookies collide on one host name: " + ", ".join(clash)})
            continue
        write_state(p, merged)
        files.append({"file": str(p), "sites": list(pair)})
    for r in results:
        if r.site not in good:
            (folder / state_file_name([r.site])).unlink(missing_ok=True)
    if files and remember:
        _remember(target, folder, role)
    return {"folder": str(folder), "role": role, "sites": [r.as_dict() for r in results], "files": files,
            "skipped_pairs": skipped, "seconds": round(time.monotonic() - t0, 3), "ok": len(good) == len(results)}


def check(target: Target, sites: list[Site], role: str = DEFAULT_ROLE, out: Path | None = None,
          rebuild: bool = True, reporter: Reporter = QUIET) -> dict:
    """Check every state file of ``sites`` in the folder with WebArena's probes (redirects
    off) and tell four outcomes apart per file and site: ``logged_in``; ``logged_out`` (the
    server-side session is gone; with ``rebuild`` the site is logged in again and its files
    rewritten); ``unhealthy`` (5xx or timeout on every try: the file is left alone, never
    reported as expired); ``wrong_credentials`` (the rebuild's login was refused).

    Returns:
        ``{"folder", "files": [{"file", "site", "state", "detail"}], "rebuilt": [site],
        "ok"}``; ``ok`` is True when every file ends logged in.

    Raises:
        UsageError: no state file of these sites in the folder.
    """
    folder = out_dir(out, role, target.instance)
    names = {s.name: s for s in sites}
    rows, stale = [], set()
    paths = sorted(folder.glob("*_state.json")) if folder.is_dir() else []
    for p in paths:
        combo = p.name.rsplit("_", 1)[0].split(".")
        if not any(c in names for c in combo):
            continue
        try:
            state = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            rows.append({"file": str(p), "site": ",".join(combo), "state": "logged_out", "detail": f"unreadable: {e}"})
            stale.update(c for c in combo if c in names)
            continue
        for c in combo:
            site = target.stack.sites.get(c)
            if site is None:
                rows.append({"file": str(p), "site": c, "state": "logged_out", "detail": "no such site in this stack"})
                continue
            try:
                account = site.account(role)
            except KeyError as e:
                rows.append({"file": str(p), "site": c, "state": "wrong_credentials", "detail": str(e.args[0])})
                continue
            drv = driver_for(site.kind.value, target.url(site))
            res = drv.check_session(session_from_state(state), account)
            rows.append({"file": str(p), "site": c, "state": res.state, "detail": res.detail, "tries": res.tries})
            reporter.step(c, f"{p.name}: {res.state}")
            if res.state == "logged_out" and c in names:
                stale.add(c)
    if not rows:
        raise UsageError(f"no state files of {', '.join(sorted(names))} in {folder}; run `sitectl login` first")
    rebuilt: list[str] = []
    if rebuild and stale:
        # Log the stale sites in again together with their pair partners, so pair files are rewritten.
        partners = {s for pair, cannot in pairs_for(target) if not cannot and stale & set(pair) for s in pair}
        again = [target.stack.sites[s] for s in sorted(stale | partners) if s in target.stack.sites]
        res = login(target, again, role, out, explicit=False, reporter=reporter)
        failed = {r["site"]: r for r in res["sites"] if r["state"] != "logged_in"}
        for row in rows:
            if row["site"] in stale and row["state"] == "logged_out":
                if row["site"] in failed:
                    row["state"] = failed[row["site"]]["state"]
                    row["detail"] = f"rebuild failed: {failed[row['site']]['detail']}"
                else:
                    row["detail"] += "; rebuilt"
        rebuilt = sorted(s for s in stale if s not in failed)
    ok = all(r["state"] == "logged_in" or (r["state"] == "logged_out" and r["site"] in rebuilt) for r in rows)
    return {"folder": str(folder), "files": rows, "rebuilt": rebuilt, "ok": ok}


# -- state folders a reset must refresh ------------------------------------------------------
def _registry(target: Target) -> Path:
    return instance_dir(target.instance) / "login-folders.json"


def _known(target: Target) -> dict:
    """The recorded state folders of the instance, folder -> role (an unreadable or
    wrong-shaped registry counts as none: it only ever names folders)."""
    p = _registry(target)
    try:
        known = json.loads(p.read_text()) if p.is_file() else {}
    except (OSError, ValueError):
        return {}
    return {f: r for f, r in known.items() if isinstance(r, str)} if isinstance(known, dict) else {}


def _remember(target: Target, folder: Path, role: str) -> None:
    """Record ``folder`` (absolute) as holding states of ``role`` for this instance."""
    p = _registry(target)
    known = _known(target)
    known[str(folder.resolve())] = role
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(known, indent=1, sort_keys=True))
    os.replace(tmp, p)


def _recorded_folders(target: Target) -> list[tuple[Path, str]]:
    """The state folders ``sitectl login`` recorded for the instance that still exist, with
    their role (:func:`_known`)."""
    return [(Path(f), r) for f, r in sorted(_known(target).items()) if Path(f).is_dir()]


def _state_sites(folder: Path, sites: list[Site]) -> list[str]:
    """The sites of ``sites`` that a state file in ``folder`` is for (by WebArena's file names)."""
    names = {s.name for s in sites}
    found = set()
    for p in folder.glob("*_state.json"):
        found |= names & set(site_comb_from_state_path(p.name))
    return sorted(found)


def stale_after_reset(target: Target, sites: list[Site]) -> list[dict]:
    """After a reset of ``sites`` (which put their sessions back to golden's), the recorded
    state folders holding states of them, without logging in (no request is made, nothing is
    written): ``[{"folder", "stale": [site], "refresh"}]``, ``refresh`` being the command that
    logs in again there (``sitectl login --check``, which rebuilds what no longer logs in)."""
    out = []
    for f, role in _recorded_folders(target):
        stale = _state_sites(f, sites)
        if stale:
            base = f if role == DEFAULT_ROLE else f.parent
            cmd = f"sitectl login --check --out {base}" + ("" if role == DEFAULT_ROLE else f" --role {role}")
            if target.instance:
                cmd += f" --instance {target.instance}"
            out.append({"folder": str(f), "stale": stale, "refresh": cmd})
    return out


def refresh_after_reset(target: Target, sites: list[Site], reporter: Reporter = QUIET) -> list[dict]:
    """After a reset of ``sites``, check every recorded state folder of the instance and log in
    again where the reset discarded the server-side session (a restore puts the sessions table,
    session files and Redis keys back to the snapshot's). Folders that no longer exist are
    forgotten. A folder whose refresh fails (a site refused, a file that cannot be written) is
    reported with ``ok`` False and ``error``; nothing is raised.

    Returns:
        ``[{"folder", "rebuilt": [site], "ok", "error"?}]``, one per folder that holds states of
        ``sites``.
    """
    out = []
    for f, role in _recorded_folders(target):
        base = f if role == DEFAULT_ROLE else f.parent
        try:
            res = check(target, sites, role, base, rebuild=True, reporter=reporter)
        except UsageError:  # no state files of these sites there
            continue
        except (SitectlError, OSError) as e:
            out.append({"folder": str(f), "rebuilt": [], "ok": False, "error": str(e).splitlines()[0][:300]})
            continue
        out.append({"folder": str(f), "rebuilt": res["rebuilt"], "ok": res["ok"]})
    return out
