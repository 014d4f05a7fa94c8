"""``sitectl task prepare``: turn a task of a WebArena-family task file into a ready environment.

For one task: check the URLs it will use (preflight), reset the sites it touches, log in the
combination its ``storage_state`` names, and write the ready config: the task with every
placeholder substituted (WebArena's ``scripts/generate_test_data.py`` order) and
``storage_state`` pointing at the fresh file. A batch (``--all``) does the same for every
task of a file, resetting each site and logging in each combination once.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from sitectl import http
from sitectl.engine import DockerEngine, Engine
from sitectl.errors import LoginsFailed, PreflightFailed, UsageError
from sitectl.ops import login as loginmod
from sitectl.ops import task_formats, task_images
from sitectl.ops.login import pairs_for
from sitectl.ops.reset import reset as reset_op
from sitectl.ops.task_formats import site_comb_from_state_path
from sitectl.ops.tasks import EVAL_TIME_TOKENS, WEBARENA_ORDER, loginable_sites, substitute
from sitectl.progress import QUIET, Reporter
from sitectl.stack.target import Target

_TOKEN = re.compile(r"__[A-Z][A-Z_]*?__")
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}\Z")
#: Site keys of the task file and the variable WebArena substitutes for each.
SITE_VARS = {"shopping": "SHOPPING", "shopping_admin": "SHOPPING_ADMIN", "reddit": "REDDIT", "gitlab": "GITLAB",
             "wikipedia": "WIKIPEDIA", "map": "MAP", "homepage": "HOMEPAGE", "classifieds": "CLASSIFIEDS"}


def urls_from(target: Target, environ: dict[str, str] | None = None) -> dict[str, str | None]:
    """WebArena's variables: from ``environ`` (what a harness would read; an unset variable
    is None) when given, else the stack's base URLs."""
    if environ is not None:
        return {v: environ.get(v) for v in WEBARENA_ORDER}
    return {s.env_var: target.url(s) for s in target.stack.sites.values()}


def substitute_task(task, urls: dict[str, str | None]):
    """``task`` with :func:`sitectl.ops.tasks.substitute` applied to every string in it (keys stay), so a URL
    holding quotes or backslashes cannot break the JSON."""
    if isinstance(task, str):
        return substitute(task, urls)
    if isinstance(task, list):
        return [substitute_task(x, urls) for x in task]
    if isinstance(task, dict):
        return {k: substitute_task(v, urls) for k, v in task.items()}
    return task


def task_urls(task: dict, fmt: str = task_formats.WEBARENA) -> list[tuple[str, str]]:
    """``(field, url)`` of every URL in a (substituted) task: the start URLs (one per tab), the
    reference URLs (split on `` |OR| ``) and the ``program_html`` target URLs that are not
    ``last`` or ``func:`` (WebArena-Verified's evaluators read a recording, not the site: only its
    start URLs are URLs to open)."""
    field = "start_urls" if fmt == task_formats.WEBARENA_VERIFIED else "start_url"
    out = [(field, u) for u in task_formats.start_urls(task, fmt)]
    ev = task.get("eval")
    if not isinstance(ev, dict):
        return out
    if ev.get("reference_url"):
        out += [("eval.reference_url", u) for u in str(ev["reference_url"]).split(" |OR| ")]
    for i, t in enumerate(ev.get("program_html") or []):
        u = str(t.get("url", ""))
        if u and u != "last" and not u.startswith("func:"):
            out.append((f"eval.program_html[{i}].url", u))
    return out


def fill(task: dict, urls: dict[str, str | None], fmt: str) -> dict:
    """The task as its format's harness fills it in: every placeholder in every string, except
    WebArena-Verified's, whose harness renders only ``start_urls`` (its expected answers and
    network events keep their ``__SITE__`` templates, which its evaluator matches against)."""
    if fmt == task_formats.WEBARENA_VERIFIED:
        return {**task, "start_urls": [substitute(u, urls) for u in task.get("start_urls") or []]}
    return substitute_task(task, urls)


def preflight(target: Target, task: dict, urls: dict[str, str | None], probe: bool = True,
              fmt: str = task_formats.WEBARENA) -> list[str]:
    """Every reason ``task`` cannot run against ``urls``; [] when none.

    Checks: each site of the task (and each placeholder it uses) has its variable set and
    non-empty; no base URL ends with ``/`` (reference URLs would get ``//``); the admin URL
    ends with ``/admin``; no ``__SITE__`` placeholder or ``None`` is left in any URL of the
    substituted task; with ``probe``, each site's base URL answers without redirecting to
    another host (the host a site redirects to is the base URL it was configured with).
    """
    tid = task.get("task_id")
    where = f"task {tid}" if tid is not None else "task"
    problems: list[str] = []
    raw = json.dumps(task)
    needed = {SITE_VARS[s] for s in task.get("sites", []) if s in SITE_VARS}
    needed |= {t.strip("_") for t in _TOKEN.findall(raw) if t not in EVAL_TIME_TOKENS and t.strip("_") in SITE_VARS.values()}
    for var in sorted(needed):
        val = urls.get(var)
        if val is None:
            problems.append(f"{where}: {var} is not set")
        elif not val.strip():
            problems.append(f"{where}: {var} is empty")
        elif val.endswith("/"):
            problems.append(f"{where}: {var}={val} ends with '/', which doubles slashes in its URLs "
                            f"(e.g. {val}/admin); give it without the trailing slash")
    adm = urls.get("SHOPPING_ADMIN")
    if "SHOPPING_ADMIN" in needed and adm and not adm.rstrip("/").endswith("/admin"):
        problems.append(f"{where}: SHOPPING_ADMIN={adm} does not end with /admin (WebArena's admin URL is the "
                        "storefront origin plus /admin)")
    done = fill(task, urls, fmt)
    for field, u in task_urls(done, fmt):
        left = sorted(set(_TOKEN.findall(u)) - EVAL_TIME_TOKENS)
        if left:
            problems.append(f"{where}: {field} {u!r} still holds {', '.join(left)}")
        if _holds_none(u):
            problems.append(f"{where}: {field} {u!r} holds 'None' (a variable was unset when it was filled in)")
    stack_urls = task_formats.variables(fmt, {s.env_var: target.url(s) for s in target.stack.sites.values()})
    for var in sorted(needed):
        val = urls.get(var)
        if val and var in stack_urls and val.rstrip("/") != stack_urls[var] and not val.endswith("/"):
            problems.append(f"{where}: {var}={val} but the stack's site is at {stack_urls[var]} (instance "
                            f"{target.instance}): storage states and resets would not match the URLs")
    st = task.get("storage_state")
    if st:
        comb = site_comb_from_state_path(st)
        for c in comb:
            site = target.stack.sites.get(c)
            if site is None:
                problems.append(f"{where}: storage_state {st} names {c!r}, which is not a site of this stack")
            elif c not in loginable_sites(target):
                problems.append(f"{where}: storage_state {st} names {c!r}, which has no login")
        if len(comb) > 2:
            problems.append(f"{where}: storage_state {st}: WebArena's states are one site or a pair")
        elif len(comb) == 2:

            known = {tuple(sorted(p)): why for p, why in pairs_for(target)}
            why = known.get(tuple(sorted(comb)), "not a pair WebArena makes")
            if why:
                problems.append(f"{where}: storage_state {st}: {why}")
    if probe and not problems:
        for var in sorted(needed):
            msg = redirect_problem(urls[var])
            if msg:
                problems.append(f"{where}: {var}: {msg}")
    return problems


def _holds_none(url: str) -> bool:
    """``None/admin`` or ``http://None:7770/``: a Python None pasted into a URL."""
    if url.startswith("None"):
        return True
    try:
        return (urlsplit(url).hostname or "") == "none"
    except ValueError:
        return False


def redirect_problem(base_url: str, timeout: float = 10.0) -> str | None:
    """None when ``base_url`` answers on its own host (a redirect within it is fine), else
    why not: the site redirects to another host (its configured base URL differs) or does
    not answer."""
    try:
        r = http.new_session().get(base_url, allow_redirects=False, timeout=timeout)
    except Exception as e:  # noqa: BLE001 - any transport failure is the answer
        return f"GET {base_url}: {type(e).__name__}"
    if r.is_redirect:
        loc = urljoin(base_url, r.headers.get("Location", ""))
        a, b = urlsplit(base_url), urlsplit(loc)
        if (a.scheme, a.netloc) != (b.scheme, b.netloc):
            return (f"{base_url} redirects to {loc}: the site is configured for {b.scheme}://{b.netloc}, "
                    f"not {a.scheme}://{a.netloc}; use that host or re-run its post-start steps (sitectl reset --recreate)")
    return None


def prepare(target: Target, tasks: list[dict], out: Path, environ: dict[str, str] | None = None,
            dry_run: bool = False, reset: bool = True, engine: Engine | None = None,
            reporter: Reporter = QUIET, images_root: Path | None = None) -> dict:
    """Prepare ``tasks`` (one, or a batch) and write their ready configs under ``out``.

    The tasks' format (:func:`sitectl.ops.task_formats.detect`) says where their start URLs
    and logins are. Steps: preflight every task (nothing is changed if any fails); reset the
    mutable sites the tasks touch (once each, whatever the format's ``require_reset`` says: each
    row reports that flag); log in each storage-state combination (once each, into
    ``out/.auth``; WebArena-Verified, which names none: each site of its tasks that has a login,
    ``<site>_state.json``); write ``out/<task_id>.json``: the task as its harness fills it in
    (:func:`fill`) with ``storage_state`` set to the fresh file's absolute path where the format
    has that field. A task's input images (VisualWebArena's ``image``) are read before anything
    changes: URLs over HTTP, paths under ``images_root`` (default: the working folder, as
    VisualWebArena's harness reads them; :func:`sitectl.ops.task_images.check_image`).

    Returns:
        ``{"format", "tasks": [{"task_id", "config", "storage_state", "states", "sites",
        "reset_flag", "images"}], "reset": [site], "logins": [state file], "dry_run", "seconds"}``; with
        ``dry_run`` the same plan with nothing reset, logged in or written.

    Raises:
        PreflightFailed: every problem of every task (exit 8).
        UsageError: a task names a site the stack does not have.
        LoginsFailed / store errors from the reset and login steps.
    """
    t0 = time.monotonic()
    fmt = task_formats.detect(tasks)
    # The stack's URLs as this format's harness wants them; a harness's own variables as they are.
    urls = urls_from(target, environ) if environ is not None else task_formats.variables(fmt, urls_from(target))
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, t in enumerate(tasks):
        tid = t.get("task_id")
        if isinstance(tid, bool) or not (isinstance(tid, int) and tid >= 0 or isinstance(tid, str) and _SAFE_ID.match(tid)):
            problems.append(f"task #{i}: task_id {tid!r} is not a number or a name of letters, digits, '_' and '-' "
                            "(it names the config file)")
        elif str(tid) in seen:
            problems.append(f"task #{i}: task_id {tid!r} repeats task #{seen[str(tid)]} (one config file each)")
        else:
            seen[str(tid)] = i
    for t in tasks:
        unknown = [s for s in t.get("sites", []) if s not in target.stack.sites]
        if unknown:
            raise UsageError(f"task {t.get('task_id')}: site(s) {', '.join(unknown)} not in stack {target.stack.name!r}")
        problems += preflight(target, t, urls, probe=False, fmt=fmt)
    if problems:
        raise PreflightFailed(problems)
    touched = sorted({s for t in tasks for s in t.get("sites", [])})
    for var in sorted({target.stack.sites[s].env_var for s in touched}):
        msg = redirect_problem(urls[var])
        if msg:
            problems.append(f"{var}: {msg}")
    images: dict[str, list[str]] = {}
    checked: dict[str, tuple[str, str | None]] = {}
    root = images_root or Path.cwd()
    for t in tasks:
        for ref in task_images.image_refs(fill(t, urls, fmt)):
            if ref not in checked:
                checked[ref] = task_images.check_image(ref, root)
            resolved, why = checked[ref]
            images.setdefault(str(t.get("task_id")), []).append(resolved)
            if why:
                problems.append(f"task {t.get('task_id')}: {why}")
    if problems:
        raise PreflightFailed(problems)
    to_reset = [target.stack.sites[s] for s in touched if target.stack.sites[s].mutable]
    loginable = loginable_sites(target)
    auth = (out / ".auth").resolve()
    plan_tasks, rows = [], []
    for t in tasks:
        cfg = fill(t, urls, fmt)
        comb, state = task_formats.login_sites(t, fmt, loginable)
        states = [state] if state else [f"{s}_state.json" for s in comb]
        if state:
            cfg["storage_state"] = str(auth / state)
        plan_tasks.append((t, cfg))
        rows.append({"task_id": t.get("task_id"), "config": str((out / f"{t['task_id']}.json").resolve()),
                     "storage_state": cfg.get("storage_state"), "states": [str(auth / x) for x in states],
                     "sites": t.get("sites", []), "reset_flag": task_formats.reset_flag(t, fmt),
                     "images": images.get(str(t.get("task_id")), [])})
    combos = sorted({Path(x).name for r in rows for x in r["states"]})
    result = {"format": fmt, "tasks": rows, "reset": [s.name for s in to_reset] if reset else [], "logins": combos,
              "dry_run": dry_run}
    if dry_run:
        result["seconds"] = round(time.monotonic() - t0, 3)
        return result
    engine = engine or DockerEngine()
    if reset and to_reset:
        reporter.step("reset", ", ".join(s.name for s in to_reset))
        reset_op(target, to_reset, engine, reporter=reporter)  # then the task's own login, below
    if combos:
        sites = sorted({s for c in combos for s in site_comb_from_state_path(c)})
        reporter.step("login", ", ".join(sites))
        res = loginmod.login(target, [target.stack.sites[s] for s in sites], out=auth, explicit=True,
                             reporter=reporter, remember=False)  # made for these tasks, not kept fresh
        made = {Path(f["file"]).name for f in res["files"]}
        missing = [c for c in combos if c not in made]
        if missing:

            skipped = [f"{'.'.join(p['pair'])}: {p['reason']}" for p in res["skipped_pairs"]]
            raise LoginsFailed.from_result(res, f"storage state not made: {', '.join(missing)}", skipped)
    out.mkdir(parents=True, exist_ok=True)
    for (_t, cfg), row in zip(plan_tasks, rows):
        loginmod.write_state(Path(row["config"]), cfg)  # atomic; mode 0600 (URLs, no secrets, but local)
    result["seconds"] = round(time.monotonic() - t0, 3)
    return result
