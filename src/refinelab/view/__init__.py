"""The results viewer: the report's numbers and figures, every trajectory attempt by attempt, case
filters and comparisons, served on 127.0.0.1 (``refinelab view``) or written as a static site
(``refinelab view --out DIR``). Figures need the ``view`` extra (matplotlib)."""

from refinelab.view._payload import Side, TrajectorySummary, summarize_trajectory
from refinelab.view._server import ViewServer, serving
from refinelab.view._site import Source
from refinelab.view._static import write_site

__all__ = ["Side", "Source", "TrajectorySummary", "ViewServer", "serving", "summarize_trajectory", "write_site"]
