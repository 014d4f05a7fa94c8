"""Helpers shared by the mini contract replicas (runs inside replica containers only)."""
