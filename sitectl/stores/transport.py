"""How a store reaches its data: commands run inside the site's container (``docker exec``),
and :func:`run_batch`, which runs a site's requests (commands, and SQL queries of any session)
with as few round trips as possible."""
from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sitectl.errors import StoreError

if TYPE_CHECKING:
    from sitectl.engine.base import Engine

# Runs length-prefixed groups of arguments as commands, one after the other, and prints after
# each one's output a marker line with its exit code and the batch's nonce (the first argument:
# no command's output can hold a marker of a batch it cannot know). POSIX sh. Each command is
# built as a list of positional references ("${3}" "${4}" ...): only index numbers ever reach
# `eval`, never an argument's text, and the cost grows in line with the number of arguments.
# A count ending in "g" marks a gate: when that command fails, the batch stops after its marker
# (what follows it is not run; the jobs' pause before a restore is one).
RUN_MANY_SH = r"""
nonce=$1; shift
i=1
while [ "$i" -le "$#" ]; do
  eval "n=\${$i}"
  gate=0; case $n in *g) gate=1; n=${n%g};; esac
  j=$((i + 1)); end=$((i + n)); cmd=""
  while [ "$j" -le "$end" ]; do cmd="$cmd \"\${$j}\""; j=$((j + 1)); done
  ( eval "$cmd" ) 2>&1
  rc=$?
  printf '\n@@sitectl-rc-%s=%s@@\n' "$nonce" "$rc"
  if [ "$gate" = 1 ] && [ "$rc" != 0 ]; then exit 0; fi
  i=$((end + 1))
done
"""
#: The exit code :meth:`ExecTransport.run_many` gives the commands a failed gate kept from running.
NOT_RUN = -1
#: Bytes of arguments one batch may carry (Linux caps one exec's arguments and environment at
#: about 2 MiB, and one argument at 128 KiB); a larger batch is refused with StoreError.
BATCH_BUDGET = 1_000_000
#: Bytes one argument may have (Linux MAX_ARG_STRLEN is 128 KiB).
ARG_BUDGET = 120_000


def _marks(nonce: str) -> re.Pattern:
    """The marker line of the batch whose nonce is ``nonce`` (its exit code captured)."""
    return re.compile(r"\n@@sitectl-rc-" + re.escape(nonce) + r"=(\d+)@@(?:\n|\Z)")


class ExecTransport:
    """Runs argv inside one container through the engine layer.

    Args:
        engine: the Docker engine.
        container: container name.
        site: site name, for error messages.
    """

    def __init__(self, engine: Engine, container: str, site: str):
        self.engine = engine
        self.container = container
        self.site = site

    def run(self, argv: list[str], what: str, timeout: float = 600) -> str:
        """Run ``argv``; return its output.

        Raises:
            StoreError: non-zero exit; the message names the site, ``what`` and the output tail.
        """
        rc, out = self.engine.exec(self.container, argv, timeout=timeout)
        if rc != 0:
            raise StoreError(f"{self.site}: {what} failed (exit code {rc}): {out.strip()[-1500:]}")
        return out

    def run_many(self, argvs: list[list[str]], what: str, timeout: float = 600,
                 gates: frozenset[int] = frozenset()) -> list[tuple[int, str]]:
        """Run several argvs in one ``docker exec`` (one round trip instead of one each) and
        return ``(exit code, output)`` of each, in order. No shell text is built from the
        arguments. The caller judges the exit codes. When a command whose index is in ``gates``
        fails, the ones after it do not run: their exit code is :data:`NOT_RUN`.

        Raises:
            StoreError: the batch itself could not run.
        """
        if not argvs:
            return []
        if not fits(argvs):
            raise StoreError(f"{self.site}: {what}: the commands are too large for one exec "
                             f"({sum(len(a.encode()) + 1 for v in argvs for a in v)} bytes)")
        args: list[str] = []
        for k, a in enumerate(argvs):
            args += [f"{len(a)}g" if k in gates else str(len(a)), *a]
        nonce = secrets.token_hex(16)
        rc, out = self.engine.exec(self.container, ["sh", "-c", RUN_MANY_SH, "sh", nonce, *args], timeout=timeout)
        pieces = _marks(nonce).split(out)  # text, rc, text, rc, ..., trailing text
        outs, rcs = pieces[0:-1:2], pieces[1::2]
        stopped = bool(outs) and len(outs) < len(argvs) and len(outs) - 1 in gates and rcs[-1] != "0"
        if rc != 0 or (len(outs) != len(argvs) and not stopped):
            raise StoreError(f"{self.site}: {what} failed (exit code {rc}): {out.strip()[-1500:]}")
        ran = [(int(r), o) for r, o in zip(rcs, outs)]
        return ran + [(NOT_RUN, "not run: an earlier step of the batch failed")] * (len(argvs) - len(ran))


def budget_chunks(items: list[str], budget: int, base: int = 0):
    """Split ``items`` into consecutive lists whose UTF-8 size (plus one separator byte each,
    plus ``base``) stays under ``budget`` bytes; an item larger than the budget gets a list of
    its own."""
    chunk: list[str] = []
    size = base
    for it in items:
        n = len(it.encode()) + 1
        if chunk and size + n > budget:
            yield chunk
            chunk, size = [], base
        chunk.append(it)
        size += n
    if chunk:
        yield chunk


def fits(argvs: list[list[str]]) -> bool:
    """Whether ``argvs`` fit in one exec: each argument under :data:`ARG_BUDGET` bytes and all
    under :data:`BATCH_BUDGET`."""
    sizes = [len(a.encode()) + 1 for v in argvs for a in v]
    return sum(sizes) + 8 * len(argvs) <= BATCH_BUDGET and all(n <= ARG_BUDGET for n in sizes)


@dataclass
class Command:
    """A command to run inside the site's container; its result is ``(exit code, output)``.
    A ``gate`` that fails in a batch keeps the batch's later commands from running
    (:meth:`ExecTransport.run_many`)."""

    argv: list[str]
    gate: bool = False

    def decode(self, rc: int, out: str) -> tuple[int, str]:
        return rc, out


def run_batch(transport: ExecTransport | None, requests: list, what: str) -> list:
    """Run ``requests`` (:class:`Command` or :class:`sitectl.stores.sql.Query`) and return each
    one's result, in order: every request that has an argv travels in one ``docker exec``;
    queries of network sessions run directly on their connections.

    Raises:
        StoreError: the exec batch itself failed, or a command needs a container and there is none.
    """
    results: list = [None] * len(requests)
    batched = [(i, r, r.argv) for i, r in enumerate(requests)]
    batched = [(i, r, a) for i, r, a in batched if a is not None]
    if batched:
        if transport is None:
            raise StoreError(f"{what}: a command needs the site's container, and none is reachable")
        gates = frozenset(k for k, (_, r, _) in enumerate(batched) if getattr(r, "gate", False))
        for (i, r, _), (rc, out) in zip(batched, transport.run_many([a for _, _, a in batched], what, gates=gates)):
            results[i] = r.decode(rc, out)
    for i, r in enumerate(requests):
        if results[i] is None:
            results[i] = r.execute()
    return results


def failure(result) -> str | None:
    """The error text of a failed request's result, or None when it succeeded: a query's
    :class:`~sitectl.stores.sql.SqlResult` error, a command's output (last 500 characters) when
    it exited non-zero or printed a Redis error reply (``(error) ...``, ``ERR ...``:
    ``redis-cli`` exits 0 on those)."""
    if not isinstance(result, tuple):
        return None if result.ok else result.error
    rc, out = result
    return out.strip()[-500:] or f"exit code {rc}" if rc != 0 or out.lstrip().startswith(("(error)", "ERR")) else None


def out_lines(text: str) -> list[str]:
    """The lines of a command's output, split on ``\n`` only: a value or file name may hold
    characters ``str.splitlines()`` also breaks on (``\r``, ``\x0b``, ``\x0c``, ``\x1c``-``\x1e``,
    ``\x85``, U+2028, U+2029). A final newline ends the last line, as with ``splitlines``."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return parts
