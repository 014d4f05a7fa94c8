"""A site's background jobs (Magento's cron, GitLab's Sidekiq) paused while sitectl works on
its stores.

The stack file's ``jobs`` entry (:class:`sitectl.stack.model.Jobs`) gives the two commands.
:func:`jobs_paused` runs ``pause`` inside the site's container before a snapshot, a reset or a
deep verify of the site and ``resume`` after it, whatever happened in between, so golden is
copied, restored and compared while no job writes (research/real-images.md §1.3). A job in
flight when the pause is asked for is waited for by the pause command itself.

A reset does better than two more round trips: :func:`pause_argv` and :func:`resume_argv` are
the same commands for the first and last steps of the reset's own ``docker exec`` batches
(:class:`sitectl.stores.site.SiteStores`), with the same errors (:func:`pause_failed`,
:func:`resume_note`).

If sitectl is killed in between, the jobs stay paused until the next snapshot, reset or deep
verify of the site resumes them (the replicas' pause also ends by itself after a bound).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from fnmatch import fnmatchcase

from sitectl.engine.base import Engine
from sitectl.errors import JobsPauseFailed
from sitectl.stack.model import Site


def jobs_paused(engine: Engine, container: str, site: Site) -> contextlib.AbstractContextManager[list[str]]:
    """Context manager: the site's jobs paused for the ``with`` body (nothing when the site
    declares no ``jobs``). It yields a list that, after the body, holds a warning when
    ``resume`` failed (the body's own result stands; the message names the command to run).

    Raises:
        JobsPauseFailed: ``pause`` exited non-zero or took longer than ``jobs.timeout`` (s);
            the body does not run.
    """
    return _paused(engine, container, site)


@contextlib.contextmanager
def _paused(engine: Engine, container: str, site: Site) -> Iterator[list[str]]:
    notes: list[str] = []
    jobs = site.jobs
    if jobs is None:
        yield notes
        return
    rc, out = engine.exec(container, list(jobs.pause), timeout=jobs.timeout)
    if rc != 0:
        # A pause that timed out may still be in force: let the jobs run again (best effort).
        engine.exec(container, list(jobs.resume), timeout=60)
        raise pause_failed(site, container, rc, out)
    try:
        yield notes
    finally:
        rc, out = engine.exec(container, list(jobs.resume), timeout=60)
        if rc != 0:
            notes.append(resume_note(site, container, rc, out))


#: Exit codes of ``timeout`` when its time ran out: coreutils' 124, BusyBox's 143 (128 + SIGTERM).
TIMED_OUT = (124, 143)


def pause_argv(site: Site) -> list[str]:
    """The site's ``jobs.pause`` as one step of a ``docker exec`` batch, bounded by
    ``jobs.timeout`` seconds through ``timeout`` (coreutils' and BusyBox's take ``SECS PROG``;
    when it expires coreutils' exits 124, BusyBox 1.35's 143, the status of the SIGTERM it
    sends). The site must declare ``jobs``."""
    jobs = site.jobs
    return ["timeout", f"{jobs.timeout:g}", *jobs.pause]


def resume_argv(site: Site) -> list[str]:
    """The site's ``jobs.resume`` (the site must declare ``jobs``)."""
    return list(site.jobs.resume)


def pause_failed(site: Site, container: str, rc: int, out: str) -> JobsPauseFailed:
    """The error for a ``jobs.pause`` that exited ``rc`` with ``out`` (nothing was copied or
    restored after it)."""
    jobs = site.jobs
    return JobsPauseFailed(
        f"{site.name}: pausing its {jobs.what} failed (`{' '.join(jobs.pause)}` in container {container}: "
        f"exit code {rc}{', timed out after %g s' % jobs.timeout if rc in TIMED_OUT else ''}: {out.strip()[-300:]}); "
        "nothing was copied or restored. Check the jobs (a job that does not end holds the pause), or "
        "correct `jobs.pause` in the stack file")


def resume_note(site: Site, container: str, rc: int, out: str) -> str:
    """The warning for a ``jobs.resume`` that exited ``rc`` with ``out``."""
    jobs = site.jobs
    return (f"{site.name}: resuming its {jobs.what} failed (exit code {rc}: {out.strip()[-200:]}); "
            f"they stay paused: run `docker exec {container} {' '.join(jobs.resume)}`")


def written_by_jobs(site: Site, item: str) -> bool:
    """Whether ``item`` is one the site's jobs write on their own (``jobs.writes``, fnmatch
    patterns, case-sensitive), named as ``verify --deep`` names it (``table cron_schedule``)
    or as a reset lists it (``table cron_schedule (3 rows)``: the note in parentheses is not
    matched)."""
    if site.jobs is None:
        return False
    names = {item, item.split(" (", 1)[0]}
    return any(fnmatchcase(n, p) for n in names for p in site.jobs.writes)
