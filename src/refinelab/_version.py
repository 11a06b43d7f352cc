"""refinelab's version, in a leaf module: every package may import it without importing ``refinelab``
itself (whose lazy facade reaches up to ``solve``); ``pyproject.toml`` reads it from here too."""

__version__ = "0.1.0"
