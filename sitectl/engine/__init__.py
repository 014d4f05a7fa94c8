"""Engine layer: every container-engine call sitectl makes.

:mod:`sitectl.engine.base` declares the protocol (:class:`Engine`, :class:`RunSpec`,
:class:`ContainerInfo`); :mod:`sitectl.engine.docker`, :mod:`sitectl.engine.swarm` and
:mod:`sitectl.engine.pod` implement it. ``DockerEngine`` is imported on first use: it pulls in
python-on-whales (about 0.13 s), which commands that never reach Docker should not pay.
"""
from __future__ import annotations

from sitectl.engine.base import ContainerInfo, Engine, RunSpec, format_argv, run_argv

__all__ = ["ContainerInfo", "DockerEngine", "Engine", "RunSpec", "format_argv", "run_argv"]


def __getattr__(name: str):
    if name == "DockerEngine":
        from sitectl.engine.docker import DockerEngine  # noqa: PLC0415 - lazy: python-on-whales costs ~0.13 s at start-up

        return DockerEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
