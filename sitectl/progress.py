"""Progress reporting for long operations (to stderr, so ``--json`` output stays clean)."""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

from rich.console import Console


class Reporter:
    """Prints one line per step: elapsed seconds, site, message. Thread-safe.

    Args:
        quiet: print nothing (tests, or callers that render their own output).
    """

    def __init__(self, quiet: bool = False, console: Console | None = None):
        self.quiet = quiet
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True,
                                          width=None if sys.stderr.isatty() else 200)
        self.t0 = time.monotonic()
        self._lock = threading.Lock()

    def step(self, site: str, message: str) -> None:
        """Report that ``site`` started or finished ``message``."""
        if self.quiet:
            return
        with self._lock:
            self.console.print(f"[dim]{time.monotonic() - self.t0:6.1f}s[/dim] [bold]{site:<15}[/bold] {message}")


    def bytes_bar(self, site: str, label: str, total: int):
        """A context manager yielding ``update(done_bytes)`` that draws a transfer bar."""

        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn  # noqa: PLC0415 - slow third-party module, only for byte bars

        @contextmanager
        def bar():
            if self.quiet:
                yield lambda done: None
                return
            with Progress("[bold]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                          TimeRemainingColumn(), console=self.console, transient=False) as prog:
                task = prog.add_task(f"{site:<15} {label}", total=total)
                yield lambda done: prog.update(task, completed=done)

        return bar()


QUIET = Reporter(quiet=True)
