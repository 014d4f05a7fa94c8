"""Stack model: load and validate declarative stack files (``stacks/*.yaml``).

The public surface is :func:`load_stack` and the models in :mod:`sitectl.stack.model`.
"""
from sitectl.stack.loader import STACKS_DIR, load_stack, resolve_stack_path
from sitectl.stack.model import (
    Account,
    HealthSpec,
    ImageBuild,
    Probe,
    Site,
    SiteKind,
    Stack,
    Step,
)

__all__ = [
    "STACKS_DIR",
    "Account",
    "HealthSpec",
    "ImageBuild",
    "Probe",
    "Site",
    "SiteKind",
    "Stack",
    "Step",
    "load_stack",
    "resolve_stack_path",
]
