"""The task file formats of the WebArena family, in one place: which format a file is, and per
format where a task's start URLs, login combination and reset flag are. Sources:
research/webarena-official.md §2-§3 (WebArena), research/family-formats.md §1.2 (VisualWebArena),
§2.2 (WebArena-Verified: ``start_urls``, an evaluator list, no ``storage_state``), §3.1
(WebArena-Lite: WebArena's fields plus ``old_task_id``).

* ``webarena``: ``start_url`` (tabs joined by `` |AND| ``), ``storage_state``
  (``./.auth/<site>[.<site>]_state.json``), ``require_reset`` (always false in the 812 tasks).
* ``webarena-lite``: as WebArena, plus ``old_task_id``.
* ``visualwebarena``: as WebArena, plus ``image`` (input images: paths or URLs, often
  ``__HOMEPAGE__/static/...``), difficulties, and ``require_reset`` (true for 22 classifieds
  tasks; VisualWebArena's harness resets only those).
* ``webarena-verified``: ``start_urls`` (a list of tabs), ``eval`` a list of evaluator configs;
  no ``storage_state``, ``require_login`` or ``require_reset`` (its harness logs into each site
  of the task itself); ``__SSH_HOST__`` stands in expected answers and is never filled in.
"""
from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import urlsplit

WEBARENA = "webarena"
WEBARENA_LITE = "webarena-lite"
VISUALWEBARENA = "visualwebarena"
WEBARENA_VERIFIED = "webarena-verified"
FORMATS = (WEBARENA, WEBARENA_LITE, VISUALWEBARENA, WEBARENA_VERIFIED)

#: Tabs of a WebArena ``start_url``.
MULTI_TAB = " |AND| "
#: Task fields only VisualWebArena's files carry (research/family-formats.md §1.2).
_VWA_FIELDS = ("image", "visual_difficulty", "reasoning_difficulty", "overall_difficulty")


def detect(tasks: list[dict]) -> str:
    """The format of a task file (a list of task objects): WebArena-Verified when tasks carry
    ``start_urls``; VisualWebArena when any carries one of its own fields (``image``, the
    difficulties) or a ``classifieds`` site; WebArena-Lite when any carries ``old_task_id``;
    else WebArena."""
    if any("start_urls" in t for t in tasks):
        return WEBARENA_VERIFIED
    if any(any(k in t for k in _VWA_FIELDS) or "classifieds" in (t.get("sites") or []) for t in tasks):
        return VISUALWEBARENA
    if any("old_task_id" in t for t in tasks):
        return WEBARENA_LITE
    return WEBARENA


def variables(fmt: str, urls: dict[str, str | None]) -> dict[str, str | None]:
    """The values a format's harness pastes for its ``__SITE__`` placeholders, from the sites'
    base URLs ``urls`` (``{"SHOPPING": ..., "WIKIPEDIA": ...}``). The same, except that
    VisualWebArena's ``WIKIPEDIA`` is the bare Kiwix origin: each of its ``__WIKIPEDIA__``
    carries the path ``/wikipedia_en_all_maxi_2022-05/A/...`` itself, where WebArena's is the
    full landing-page URL (research/family-formats.md §1.2)."""
    out = dict(urls)
    wiki = out.get("WIKIPEDIA")
    if fmt == VISUALWEBARENA and wiki:
        o = urlsplit(wiki)
        out["WIKIPEDIA"] = f"{o.scheme}://{o.netloc}"
    return out


def start_urls(task: dict, fmt: str) -> list[str]:
    """The URLs the task opens, one per tab, in order."""
    if fmt == WEBARENA_VERIFIED:
        return [str(u) for u in task.get("start_urls") or []]
    return str(task.get("start_url", "")).split(MULTI_TAB)


def site_comb_from_state_path(path: str) -> list[str]:
    """WebArena's ``get_site_comb_from_filepath``: ``./.auth/gitlab.reddit_state.json`` gives
    ``["gitlab", "reddit"]`` (basename, ``rsplit("_", 1)[0]``, ``split(".")``;
    webarena-official.md §3.2)."""
    return PurePosixPath(path).name.rsplit("_", 1)[0].split(".")


def login_sites(task: dict, fmt: str, loginable: set[str]) -> tuple[list[str], str | None]:
    """The sites a harness logs the task into, and the storage-state file name it reads them from
    (None when the format has none). WebArena, Lite and VisualWebArena: the combination the
    ``storage_state`` names (``[]`` without one); WebArena-Verified: every site of the task that
    has a login (``loginable``), each logged in on its own (its harness's ``ui_login`` per site)."""
    if fmt == WEBARENA_VERIFIED:
        return [s for s in task.get("sites") or [] if s in loginable], None
    st = task.get("storage_state")
    if not st:
        return [], None
    return site_comb_from_state_path(st), PurePosixPath(st).name


def reset_flag(task: dict, fmt: str) -> bool | None:
    """What the format's own flag says of a reset before the task: ``require_reset`` where the
    format has it (WebArena, Lite, VisualWebArena), None where it has none (WebArena-Verified).
    sitectl resets the task's mutable sites either way (a reset costs about a second); the flag
    is reported, since VisualWebArena's harness resets only flagged tasks and nine tasks that
    change the classifieds site are not flagged (research/family-formats.md §4.10)."""
    if fmt == WEBARENA_VERIFIED:
        return None
    v = task.get("require_reset")
    return bool(v) if v is not None else None
