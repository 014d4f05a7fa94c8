"""A fleet of instances on a cluster: Docker Swarm (placement, stacks, reset agents, the pool)
and Kubernetes manifests (docs/cluster.md).

Layout (docs/cluster.md)::

    stack sitectl-pool   service pool   on a manager: leases, placement, healing
    stack sitectl-i<K>   one service per site (Swarm tasks on ONE node)
                         service agent  on the same node, with the node's Docker socket and the
                                        instance's state volume: ``up`` (post-start steps,
                                        golden snapshot), ``verify``, then the reset and lease
                                        API of ``sitectl serve`` for instance K

Every service of an instance is pinned to the node the pool chose (``node.id == ...``): the
sites' state lives in their containers and volumes on that node, and the agent resets it
there with the same code as on one host (:class:`sitectl.engine.swarm.TaskEngine`). The pool
resets an instance by calling its agent. When a node is lost, the pool moves the leases of
its instances to idle instances (or keeps them waiting for the replacement), deploys each lost
instance again on another node, and leases it again only after its agent brought it up,
took golden and passed ``verify``.

Modules (each imports only those above it):

* :mod:`~sitectl.fleet.spec`: :class:`~sitectl.fleet.spec.ClusterSpec`, the fleet's images,
  ports and paths, the ``--reserve-memory`` / ``--node-label`` parsers;
* :mod:`~sitectl.fleet.naming`: stack, port, secret, namespace and Service names;
* :mod:`~sitectl.fleet.placement`: which node takes an instance;
* :mod:`~sitectl.fleet.compose`: the instance and pool stacks as compose mappings;
* :mod:`~sitectl.fleet.agent`: the reset agent and its HTTP client;
* :mod:`~sitectl.fleet.pool`: the pool that places, leases, resets and heals;
* :mod:`~sitectl.fleet.images`: the agent image and copying images to the nodes;
* :mod:`~sitectl.fleet.deploy`: deploy, status and removal from outside the swarm;
* :mod:`~sitectl.fleet.k8s`: the Kubernetes manifests.

Nothing is imported here: the fleet (python-on-whales, requests, yaml) loads only for the
commands that use it. The HTTP server the agent and the pool serve with is the face's
(:mod:`sitectl.cli.cluster` runs :mod:`sitectl.server`).
"""
