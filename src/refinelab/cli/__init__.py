"""The ``refinelab`` command: a thin shell over the library.

User errors print one line and exit with code 2; bugs keep their traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Mapping, Sequence

from refinelab import __version__
from refinelab.cli import _check, _ping, _recall, _report, _run, _view
from refinelab.errors import InfrastructureError, UserError


def build_parser(environ: Mapping[str, str]) -> argparse.ArgumentParser:
    """The argument parser with every command."""
    parser = argparse.ArgumentParser(prog="refinelab", description="Measure what test-time strategies buy.")
    parser.add_argument("--version", action="version", version=f"refinelab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _check.add_parser(commands, environ)
    _ping.add_parser(commands, environ)
    _recall.add_parser(commands, environ)
    _run.add_parser(commands, environ)
    _report.add_parsers(commands, environ)
    _view.add_parser(commands, environ)
    return parser


def _show_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    print(f"refinelab: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the command line; return the exit code."""
    import os

    environment = os.environ if environ is None else environ
    args = build_parser(environment).parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        code: int = args.run(args)
    except UserError as exc:
        print(f"refinelab: error: {exc}", file=sys.stderr)
        return 2
    except InfrastructureError as exc:
        print(f"refinelab: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("refinelab: interrupted", file=sys.stderr)
        return 130
    return code


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
