"""``sitectl tasks check``: can the running stack serve a WebArena task file?"""
from __future__ import annotations

import concurrent.futures
import json
import re
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import requests

from sitectl.errors import LoginError, SiteUnhealthy, UsageError
from sitectl.ops import task_evals, task_formats
from sitectl.sites import DRIVERS, driver_for
from sitectl.sites.base import THROTTLE_WAIT
from sitectl.stack.target import Target

#: Substitution order of WebArena's ``scripts/generate_test_data.py`` (webarena-official.md §2).
WEBARENA_ORDER = ("GITLAB", "REDDIT", "SHOPPING", "SHOPPING_ADMIN", "WIKIPEDIA", "MAP", "HOMEPAGE", "CLASSIFIEDS")
#: Tokens filled at evaluation time, not from the environment: WebArena's ``__last_url__`` and
#: ``__page__``; WebArena-Verified's ``__SSH_HOST__`` (in expected answers only, never filled in).
EVAL_TIME_TOKENS = {"__last_url__", "__page__", "__SSH_HOST__"}
#: A site placeholder: upper case (``__SHOPPING__``); ``fotorama__stage__frame``, a CSS class in
#: VisualWebArena's checks, is none.
_TOKEN = re.compile(r"__[A-Z][A-Z_]*?__")


def substitute(text: str, env: dict[str, str | None]) -> str:
    """Replace ``__NAME__`` placeholders in WebArena's order with the stack's base URLs; a None
    value is pasted as ``None``, as a Python f-string in a harness would (``task prepare``'s
    preflight then names it)."""
    for name in WEBARENA_ORDER:
        if name in env:
            text = text.replace(f"__{name}__", str(env[name]))
    return text


def load_tasks(path: Path) -> list[dict]:
    """Read a WebArena task file (a JSON list of task objects).

    Raises:
        UsageError: missing file, malformed JSON, or not a list of tasks (the file is named).
    """
    if path.is_dir():
        raise UsageError(f"{path}: is a directory, not a task file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply to read (not a task file)") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise UsageError(f"{path}: not a WebArena task file (a non-empty list of task objects)")
    objects = [t for t in data if isinstance(t, dict)]
    fmt = task_formats.detect(objects)
    for i, task in enumerate(data):
        where = f"{path}: task #{i}" + (f" (task_id {task.get('task_id')!r})" if isinstance(task, dict) else "")
        if not isinstance(task, dict):
            raise UsageError(f"{where}: not an object")
        if fmt == task_formats.WEBARENA_VERIFIED:
            urls = task.get("start_urls")
            if not isinstance(urls, list) or not urls or not all(isinstance(u, str) and u for u in urls):
                raise UsageError(f"{where}: field 'start_urls' must be a non-empty list of URLs (WebArena-Verified's format)")
        elif not isinstance(task.get("start_url"), str):
            raise UsageError(f"{where}: field 'start_url' must be a string")
        if task.get("storage_state") is not None and not isinstance(task["storage_state"], str):
            raise UsageError(f"{where}: field 'storage_state' must be a string or null")
        sites = task.get("sites", [])
        if not isinstance(sites, list) or not all(isinstance(s, str) for s in sites):
            raise UsageError(f"{where}: field 'sites' must be a list of site names")
    return data


def loginable_sites(target: Target) -> set[str]:
    """The sites of ``target`` a harness can log in: a driver with a login, a ``default`` account."""
    return {n for n, s in target.stack.sites.items() if "default" in s.accounts and DRIVERS[s.kind.value].has_login}


def check_tasks(target: Target, tasks: list[dict], timeout: float = 20.0, evaluator: str | None = None,
                sessions: dict | None = None) -> dict:
    """Check each task against the running stack.

    The file's format (:mod:`sitectl.ops.task_formats`: WebArena, WebArena-Lite,
    VisualWebArena, WebArena-Verified) says where each task's start URLs and login are. A task is
    served when (1) every placeholder in the whole task resolves to a site of the stack and none
    is left (other than :data:`EVAL_TIME_TOKENS`), (2) its ``storage_state`` file name (where the
    format has one) parses to sites that have a login and an account,
    (3) every start URL (one per tab) answers HTTP 200 to a session logged in as the
    site's default account, on the site's own origin, and (4) the evaluator can run each of its
    ``program_html`` checks (:func:`sitectl.ops.task_evals.program_html_problems`; ``evaluator``:
    ``webarena``, ``webarena-lite`` or ``visualwebarena``, default from the tasks' fields).
    ``sessions``: a dict the logged-in sessions are kept in, to share between calls on the same
    target (several files: each site is logged in once, GitLab throttles sign-ins). A login the
    site throttles (HTTP 429) is tried once more after its ``Retry-After`` (at most
    :data:`sitectl.sites.base.THROTTLE_WAIT` s).

    Returns:
        ``{"total", "served", "evaluator", "by_site": {site: {"tasks", "served"}}, "failures":
        [{"task_id", "reason"}], "unique_start_urls"}``
    """
    fmt = task_formats.detect(tasks)
    evaluator = evaluator or task_evals.evaluator_for(fmt)
    env = task_formats.variables(fmt, {s.env_var: target.url(s) for s in target.stack.sites.values()})
    by_origin = {}
    for s in target.stack.sites.values():
        by_origin[f"{urlsplit(target.url(s)).scheme}://{urlsplit(target.url(s)).netloc}"] = s
    loginable = loginable_sites(target)

    # One logged-in session per site, made lazily and reused (WebArena logs in the same way).
    sessions = {} if sessions is None else sessions

    def login(drv, s, site) -> None:
        try:
            drv.login(s, site.account("default"))
        except SiteUnhealthy as e:
            if not e.retry_after:
                raise
            time.sleep(min(e.retry_after, THROTTLE_WAIT))  # throttled: wait as asked, then once more
            drv.login(s, site.account("default"))

    def session_for(site) -> requests.Session:
        if site.name not in sessions:
            drv = driver_for(site.kind.value, target.url(site))
            s = drv.new_session()
            if site.name in loginable:
                try:
                    login(drv, s, site)
                except (LoginError, SiteUnhealthy) as e:
                    sessions[site.name] = e
                    raise
            sessions[site.name] = s
        got = sessions[site.name]
        if isinstance(got, Exception):
            raise got
        return got

    url_status: dict[str, str | None] = {}

    def check_url(url: str) -> str | None:
        try:
            o = urlsplit(url)
            o.port  # noqa: B018 - raises on a malformed port
        except ValueError as e:
            return f"start URL {url!r} is malformed ({e})"
        site = by_origin.get(f"{o.scheme}://{o.netloc}")
        if site is None:
            return f"start URL {url} is on no site of the stack"
        try:
            sess = session_for(site)
            r = sess.get(url, timeout=timeout)
        except (LoginError, SiteUnhealthy) as e:
            return str(e)
        except requests.RequestException as e:
            return f"GET {url}: {type(e).__name__}"
        final = urlsplit(r.url)
        if (final.scheme, final.netloc) != (o.scheme, o.netloc):
            return f"GET {url} ended on another origin: {r.url}"
        if r.status_code != 200:
            return f"GET {url}: HTTP {r.status_code}"
        return None

    all_urls = sorted({substitute(u, env) for t in tasks for u in task_formats.start_urls(t, fmt)
                       if not _TOKEN.search(substitute(u, env))})
    # Log in first, one site at a time, so concurrent URL checks share sessions.
    for u in all_urls:
        try:
            o = urlsplit(u)
        except ValueError:
            continue  # reported by check_url
        site = by_origin.get(f"{o.scheme}://{o.netloc}")
        if site is not None:
            try:
                session_for(site)
            except (LoginError, SiteUnhealthy):
                pass
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for u, res in zip(all_urls, pool.map(check_url, all_urls)):
            url_status[u] = res

    by_site: dict[str, dict] = defaultdict(lambda: {"tasks": 0, "served": 0})
    failures = []
    served = 0
    for t in tasks:
        tid = t.get("task_id")
        text = substitute(json.dumps(t), env)
        reasons = []
        left = sorted(set(_TOKEN.findall(text)) - EVAL_TIME_TOKENS)
        if left:
            reasons.append(f"unresolved placeholder(s) {', '.join(left)}")
        reasons += task_evals.program_html_problems(json.loads(text), evaluator)
        comb, st = task_formats.login_sites(t, fmt, loginable)
        if st:
            bad = [c for c in comb if c not in loginable]
            if bad:
                reasons.append(f"storage_state {t['storage_state']}: no login for {', '.join(bad)}")
        for u in (substitute(x, env) for x in task_formats.start_urls(t, fmt)):
            if _TOKEN.search(u):
                continue  # already reported as unresolved
            if url_status.get(u):
                reasons.append(url_status[u])
        ok = not reasons
        served += ok
        for s in t.get("sites", []):
            by_site[s]["tasks"] += 1
            by_site[s]["served"] += ok
        if not ok:
            failures.append({"task_id": tid, "reason": "; ".join(reasons)})
    # WebArena-Verified's evaluators read a recording, not the page: it has no program_html to read.
    return {"total": len(tasks), "served": served, "format": fmt,
            "evaluator": None if fmt == task_formats.WEBARENA_VERIFIED else evaluator,
            "unique_start_urls": len(all_urls),
            "by_site": dict(by_site), "failures": failures}
