"""Operations: what the faces (CLI, server, Python API) call. Each speaks in sites and stacks."""
