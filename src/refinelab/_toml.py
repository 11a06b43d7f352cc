"""Reading TOML inputs with errors that name the file, the line and the field."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from refinelab.errors import InputError, UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


def read_toml(path: Path) -> dict[str, object]:
    """The parsed file; a missing file or bad TOML is a one-line user error."""
    try:
        with path.open("rb") as handle:
            data: dict[str, object] = tomllib.load(handle)
            return data
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, getattr(exc, "lineno", None), None, f"invalid TOML ({exc})") from None


def located(path: Path, field: str, problem: str) -> InputError:
    """An :class:`InputError` for ``field`` (dotted: ``limit``, ``sandbox.timeout``, ``benchmarks[1].name``)
    with the line where it is written, when that can be found."""
    return InputError(path, line_of(path, field), field, problem)


def line_of(path: Path, field: str) -> int | None:
    """The line that assigns ``field``'s last part inside its table (or opens a table of that name)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    table, _, key = field.rpartition(".")
    start, end = _table_span(lines, table) if table else (0, _next_header(lines, 0))
    pattern = re.compile(rf"^\s*(\[\[?\s*{re.escape(key)}\s*\]\]?|\"?{re.escape(key)}\"?\s*=)")
    found = next((n for n in range(start, end) if pattern.match(lines[n])), None)
    if found is None and not table:
        found = next((n for n, line in enumerate(lines) if pattern.match(line)), None)
    return None if found is None else found + 1


def _table_span(lines: list[str], table: str) -> tuple[int, int]:
    """Lines of ``name`` / ``name[i]`` (the i-th ``[[name]]``), header excluded."""
    name, _, index = table.partition("[")
    wanted = int(index.rstrip("]")) if index else 0
    header = re.compile(rf"^\s*\[\[?\s*{re.escape(name)}\s*\]\]?")
    seen = -1
    for number, line in enumerate(lines):
        if header.match(line):
            seen += 1
            if seen == wanted:
                return number + 1, _next_header(lines, number + 1)
    return 0, len(lines)


def _next_header(lines: list[str], start: int) -> int:
    return next((n for n in range(start, len(lines)) if lines[n].lstrip().startswith("[")), len(lines))
