"""Stack model: load and validate declarative stack files (``stacks/*.yaml``).

The public surface is :func:`load_stack` and the models in :mod:`sitectl.stack.model`. They
are imported on first use (PEP 562): the models are pydantic classes, whose import and build
cost ~0.13 s, and ``sitectl env`` answers from its memo without them
(:mod:`sitectl.ops.envvars`).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sitectl.stack.loader import STACKS_DIR, load_stack, resolve_stack_path
    from sitectl.stack.model import Account, HealthSpec, ImageBuild, Probe, Site, SiteKind, Stack, Step

#: Each public name and the module that defines it.
_EXPORTS = {
    "STACKS_DIR": "loader", "load_stack": "loader", "resolve_stack_path": "loader",
    "Account": "model", "HealthSpec": "model", "ImageBuild": "model", "Probe": "model", "Site": "model",
    "SiteKind": "model", "Stack": "model", "Step": "model",
}

__all__ = ["STACKS_DIR", "Account", "HealthSpec", "ImageBuild", "Probe", "Site", "SiteKind", "Stack", "Step",
           "load_stack", "resolve_stack_path"]
assert sorted(__all__) == sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"sitectl.stack.{module}"), name)
