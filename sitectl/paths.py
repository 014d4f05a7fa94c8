"""Where sitectl keeps things on the host: the project's data folders and the state folder.

* :data:`REPO_ROOT`: the checkout sitectl runs from (``stacks/``, ``healthchecks/`` beside
  the ``sitectl`` package).
* :func:`cache_dir`: what can be recomputed at any time (``sitectl env``'s memo); deleting it
  loses nothing.
* :func:`state_dir`: snapshot manifests, reset journals, instance locks, recorded storage
  states and the serve token, ``<state dir>/i<N>/...`` per instance (layout:
  ``snapshots/README.md``).
"""
from __future__ import annotations

import os
from pathlib import Path

#: The project root: the folder holding the ``sitectl`` package, ``stacks/`` and ``healthchecks/``.
REPO_ROOT = Path(__file__).resolve().parents[1]


def state_dir() -> Path:
    """The host folder of sitectl's state: ``$SITECTL_SNAPSHOTS_DIR``, else
    ``~/.local/share/sitectl/snapshots``. Read on every call, so a test or a harness may set
    the variable at any time."""
    return Path(os.environ.get("SITECTL_SNAPSHOTS_DIR", Path.home() / ".local/share/sitectl/snapshots"))


def instance_dir(instance: int) -> Path:
    """The state folder of instance ``instance``: ``<state dir>/i<instance>``."""
    return state_dir() / f"i{instance}"


def cache_dir() -> Path:
    """The host folder of what sitectl can recompute: ``$SITECTL_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/sitectl``, else ``~/.cache/sitectl`` (XDG Base Directory
    Specification 0.8). Read on every call."""
    if os.environ.get("SITECTL_CACHE_DIR"):
        return Path(os.environ["SITECTL_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "sitectl"
