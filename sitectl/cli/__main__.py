"""``python -m sitectl.cli``: the same as the ``sitectl`` command."""
from sitectl.cli import run

run()
