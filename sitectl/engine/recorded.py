"""The target of an instance as it runs: the host (and per-site host names) recorded on its
containers' labels, folded into :func:`sitectl.stack.target.resolve_target`. Light on purpose:
every command starts here (``sitectl env`` in a harness loop), so it needs only the config
file and one label lookup (:meth:`sitectl.engine.base.Engine.container_labels`) until the
stack is loaded."""
from __future__ import annotations

from dataclasses import dataclass

from sitectl.engine.base import Engine
from sitectl.stack.target import Target, read_config, resolve_target


def recorded_host(engine: Engine, instance: int | None) -> tuple[str | None, bool | None]:
    """The host an instance's running containers were made for and whether each site has its
    own name under it (labels ``sitectl.host``, ``sitectl.site_hosts``); (None, None) when no
    container of the instance runs or no engine answers (config and defaults decide then)."""
    try:
        for labels in engine.container_labels({"sitectl.instance": str(instance or 0)},
                                         ("sitectl.host", "sitectl.site_hosts")):
            if labels.get("sitectl.host"):
                return labels["sitectl.host"], labels.get("sitectl.site_hosts") == "1"
    except Exception:  # noqa: BLE001 - no engine: fall back to config/defaults
        return None, None
    return None, None


@dataclass(frozen=True)
class TargetInputs:
    """Everything the target of a running instance is resolved from, before the stack file is
    read: the command's options (None = not given), the config file's contents and what the
    instance's containers recorded. :meth:`resolve` makes the target; a memo of something
    computed from the target is keyed by these and the stack's files (``Stack.sources``)."""

    options: dict
    config: dict
    recorded_host: str | None
    recorded_site_hosts: bool | None

    def resolve(self) -> Target:
        """The target (:func:`~sitectl.stack.target.resolve_target`).

        Raises:
            UsageError, sitectl.errors.StackError: bad values, naming the option or file.
        """
        o = self.options
        return resolve_target(o["stack"], o["host"], o["instance"], o["data_dir"], o["config"],
                              recorded_host=self.recorded_host, seed=o["seed"], scale=o["scale"],
                              site_hosts=o["site_hosts"], recorded_site_hosts=self.recorded_site_hosts,
                              cfg=self.config)


def target_inputs(engine: Engine, stack: str | None = None, host: str | None = None, instance: int | None = None,
                  data_dir: str | None = None, config: str | None = None, seed: int | None = None,
                  scale: str | None = None, site_hosts: bool | None = None) -> TargetInputs:
    """Read the config file and the labels of the instance the command acts on (the config
    file may name it): the :class:`TargetInputs` of :func:`running_target`.

    Raises:
        UsageError: a bad config file (named).
    """
    cfg = read_config(config)
    rec_host, rec_site_hosts = recorded_host(engine, instance if instance is not None else cfg.get("instance"))
    options = {"stack": stack, "host": host, "instance": instance, "data_dir": data_dir, "config": config,
               "seed": seed, "scale": scale, "site_hosts": site_hosts}
    return TargetInputs(options, cfg, rec_host, rec_site_hosts)


def running_target(engine: Engine, stack: str | None = None, host: str | None = None, instance: int | None = None,
                   data_dir: str | None = None, config: str | None = None, seed: int | None = None,
                   scale: str | None = None, site_hosts: bool | None = None) -> Target:
    """The :class:`~sitectl.stack.target.Target` of instance ``instance`` as it runs: the
    options given, then the config file, then the host and site-host setting recorded on the
    instance's running containers (:func:`recorded_host`), then the stack's defaults. The one
    place the CLI, the Python API and the locators resolve "the target of instance N".

    Raises:
        UsageError, sitectl.errors.StackError: bad values, naming the option or file.
    """
    return target_inputs(engine, stack, host, instance, data_dir, config, seed, scale, site_hosts).resolve()
