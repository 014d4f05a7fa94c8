"""A fleet of instances on a cluster: Docker Swarm (placement, stacks, reset agents, the pool)
and Kubernetes manifests."""
