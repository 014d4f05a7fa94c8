"""Adapters that let RL frameworks lease sitectl's instances through a reset server's HTTP API
(docs/rl-adapters.md): :mod:`.lease_client` (the shared client), :mod:`.nemo_gym` (a NeMo Gym
sandbox provider) and :mod:`.openenv` (an OpenEnv environment). They speak HTTP only: nothing
here reaches Docker, the stores or the stack model."""
