"""sitectl's version, recorded in every snapshot manifest it writes."""

__version__ = "0.1.0"
