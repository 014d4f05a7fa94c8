"""sitectl: provision, snapshot, reset, log into and verify WebArena-family benchmark sites."""

__version__ = "0.1.0"
