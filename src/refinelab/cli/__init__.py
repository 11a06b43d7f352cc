"""The ``refinelab`` command: a thin shell over the library.

User errors print one line and exit with code 2; bugs keep their traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import NoReturn

from refinelab._version import __version__
from refinelab.cli import _check, _ping, _recall, _report, _run, _solve, _view
from refinelab.errors import InfrastructureError, UserError


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: a wrong flag or choice says what is wrong and where to read more,
    without the usage dump (exit 2, as every user error). Every command's parser is one of these."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(environ: Mapping[str, str]) -> argparse.ArgumentParser:
    """The argument parser with every command."""
    parser = _Parser(prog="refinelab", description="Measure what test-time strategies buy.")
    parser.add_argument("--version", action="version", version=f"refinelab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _check.add_parser(commands, environ)
    _ping.add_parser(commands, environ)
    _recall.add_parser(commands, environ)
    _run.add_parser(commands, environ)
    _report.add_parsers(commands, environ)
    _solve.add_parser(commands, environ)
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
    except BrokenPipeError:
        return _reader_gone()
    return code


BROKEN_PIPE = 128 + 13
"""Exit code when the reader of our output went away (``| head``), as a process killed by SIGPIPE."""


def _reader_gone() -> int:
    """Whoever read our output stopped reading (``refinelab run ... | head``): what was stored stays as it
    is (a finished run stays complete), nothing more is written, and Python's flush at exit stays quiet."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):  # a stream without a descriptor (captured in tests)
            pass
    return BROKEN_PIPE


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
