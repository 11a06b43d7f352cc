"""Writing output files so that they are whole or absent, never half-written; saying where a JSON file
is malformed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from refinelab.errors import UserError


def write_atomically(path: Path, text: str | Iterable[str]) -> None:
    """Write beside ``path`` and rename; a write error is a one-line user error."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as handle:
            for chunk in [text] if isinstance(text, str) else text:
                handle.write(chunk)
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write: {exc.strerror}") from None


class LinesInOrder:
    """A file of numbered lines written while they arrive, in any order: each line goes out as soon as every
    line before it has (a long run's output is written during the run, not all at its end), and the file
    appears under its name only once every line is in; until then it is a hidden file beside it, removed if
    the run fails. Use as a context manager."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        """Where the file appears."""
        self.count = count
        """Lines the file will hold."""
        self.temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self.pending: dict[int, str] = {}
        self.written = 0

    def __enter__(self) -> LinesInOrder:
        try:
            self.handle = self.temporary.open("w", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write: {exc.strerror}") from None
        return self

    def put(self, index: int, line: str) -> None:
        """Line ``index`` (from 0; without its newline)."""
        self.pending[index] = line
        while self.written in self.pending:
            self._write(self.pending.pop(self.written) + "\n")
            self.written += 1

    def _write(self, text: str) -> None:
        try:
            self.handle.write(text)
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write: {exc.strerror}") from None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            self.handle.close()
            if kind is None and self.written != self.count:
                raise RuntimeError(f"{self.path}: {self.written} of {self.count} lines given")  # a caller's bug
            if kind is None:
                self.temporary.replace(self.path)
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write: {exc.strerror}") from None
        finally:
            self.temporary.unlink(missing_ok=True)


def json_problem(error: json.JSONDecodeError) -> str:
    """What is wrong and where on its line: ``Unterminated string starting at column 13`` (``json``'s own
    message ends in a dangling "at" for some errors)."""
    return f"{error.msg.removesuffix(' at')} at column {error.colno}"
