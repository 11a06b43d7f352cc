"""``refinelab view``: browse stored runs in a browser, served locally or written as a static site."""

from __future__ import annotations

import argparse
import sys
import time
import webbrowser
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from refinelab._words import counted
from refinelab.cli import _options
from refinelab.cli._report import with_store
from refinelab.report import figures_missing
from refinelab.view import Source, serving, write_site


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``view``."""
    parser = commands.add_parser("view", help="browse runs: overview, figures, trajectories, comparisons")
    parser.add_argument("runs", nargs="*", metavar="RUN", help="run ids or unique prefixes (default: every run)")
    _options.add_store(parser)
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser")
    parser.add_argument("--out", type=Path, metavar="DIR", help="write a static site to DIR instead of serving")
    parser.set_defaults(run=lambda args: run_view(args, environ))


def run_view(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Serve the viewer until interrupted, or write it as a static site."""
    settings = _options.settings(args, environ, ("store",))
    store = with_store(settings, lambda opened: opened.path)  # a user error when there is none
    if (missing := figures_missing()) is not None:
        print(f"refinelab view: every page, no figures: {missing}", file=sys.stderr)
    if args.out is not None:
        count = write_site(Source(store, args.runs), args.out)
        print(f"{counted(count, 'file')} -> {args.out} (open {args.out / 'index.html'}; no network needed)")
        return 0
    with serving(Source(store, args.runs, live=True), args.port) as server:  # its threads open their own
        print(f"refinelab view: {server.url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
        if not args.no_open:
            webbrowser.open(server.url)
        while True:
            time.sleep(3600)
