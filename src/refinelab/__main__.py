"""``python -m refinelab``."""

from refinelab.cli import entry

entry()
