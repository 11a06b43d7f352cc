"""How long jobs report progress to whoever shows it (the CLI draws a bar; the library draws nothing)."""

from __future__ import annotations

from collections.abc import Callable

ProgressHook = Callable[[str, int, int], None]
"""Called as ``hook(what, done, total)`` when work advances: ``what`` names the phase ("scoring",
"computing expected outputs"), ``done`` of ``total`` units are finished. Called from the event loop's
thread; it must return quickly. A phase whose name starts with :data:`DOWNLOADING` counts bytes
(``total`` is 0 when the size is unknown)."""

DOWNLOADING = "downloading"
"""First word of a phase that counts bytes (``downloading test5.jsonl``)."""
