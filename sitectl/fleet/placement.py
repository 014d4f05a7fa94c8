"""Placement: which Swarm node takes a new instance (:func:`choose_node`)."""
from __future__ import annotations

from sitectl.engine.swarm import NodeInfo
from sitectl.errors import NoNodeFits


def choose_node(nodes: list[NodeInfo], placed: dict[str, int], need: int, labels: dict[str, str],
                avoid: set[str] = frozenset()) -> NodeInfo:
    """The node for a new instance: ready and active, carrying ``labels``, not in ``avoid``,
    with ``need`` bytes of memory free after what the fleet's instances there reserve; of
    those, the one with the most free memory (then the least reserved, then the first host name).

    Args:
        placed: bytes already reserved on each node id by other instances.

    Raises:
        NoNodeFits: the message says, per node, why it does not fit.
    """
    why = []
    fits = []
    for n in nodes:
        free = n.memory - placed.get(n.id, 0)
        missing = [f"{k}={v}" if v else k for k, v in labels.items()
                   if k not in n.labels or (v and n.labels[k] != v)]
        if not n.usable:
            why.append(f"{n.hostname}: {n.state}/{n.availability}")
        elif n.id in avoid:
            why.append(f"{n.hostname}: the instance failed there")
        elif missing:
            why.append(f"{n.hostname}: lacks label {', '.join(missing)}")
        elif free < need:
            why.append(f"{n.hostname}: {free >> 20} MiB free, {need >> 20} MiB needed")
        else:
            fits.append((free, n))
    if not fits:
        raise NoNodeFits("no node can take the instance: " + ("; ".join(why) or "the swarm has no nodes"))
    return min(fits, key=lambda fn: (-fn[0], placed.get(fn[1].id, 0), fn[1].hostname))[1]
