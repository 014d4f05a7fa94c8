"""`Swarm.remove_stack` repeats `docker stack rm` while Swarm answers that the stack's network
is still in use by a task (it detaches tasks after removing the services), and gives up on any
other refusal at once.

Mocked, and why: the moment Swarm still holds a removed stack's network cannot be produced on
demand, so the docker CLI's answers are a double (a python-on-whales stand-in raising its
DockerException); `Swarm.remove_stack` and its retry are the real code.
tests/fleet/test_cluster.py removes a real fleet on three real nodes."""
from __future__ import annotations

import pytest
from python_on_whales.exceptions import DockerException

from sitectl.engine.swarm import Swarm
from sitectl.errors import EngineError


class _Stacks:
    def __init__(self, answers):
        self.answers, self.calls = list(answers), 0

    def list(self):
        return [type("S", (), {"name": "sitectl-i0"})()]

    def remove(self, name, **_):
        self.calls += 1
        err = self.answers.pop(0)
        if err:
            raise DockerException(["docker", "stack", "rm", name], 1, b"", err.encode())


def _swarm(answers):
    stacks = _Stacks(answers)
    engine = type("E", (), {"docker": type("D", (), {"stack": stacks})()})()
    return Swarm(engine), stacks


def test_in_use_network_is_waited_for():
    busy = "Failed to remove network abc: Error response from daemon: network sitectl-i0_net id abc is in use by task xyz"
    swarm, stacks = _swarm([busy, busy, None])
    swarm.remove_stack("sitectl-i0", wait=10)
    assert stacks.calls == 3


def test_other_refusals_are_not_repeated():
    swarm, stacks = _swarm(["Error response from daemon: This node is not a swarm manager."])
    with pytest.raises(EngineError, match="not a swarm manager"):
        swarm.remove_stack("sitectl-i0", wait=10)
    assert stacks.calls == 1
