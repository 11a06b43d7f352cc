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
        raise InputError(path, _error_line(exc), None, f"invalid TOML ({exc})") from None


def _error_line(exc: ValueError) -> int | None:
    """The line a TOML error is on: ``lineno`` from Python 3.14, else the ``(at line N, ...)`` of its text."""
    line = getattr(exc, "lineno", None)
    if isinstance(line, int):
        return line
    found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
    return int(found.group(1)) if found else None


def located(path: Path, field: str, problem: str) -> InputError:
    """An :class:`InputError` for ``field`` (dotted: ``limit``, ``sandbox.timeout``, ``benchmarks[1].name``)
    with the line where it is written, when that can be found."""
    return InputError(path, line_of(path, field), field, problem)


def line_of(path: Path, field: str) -> int | None:
    """The line that opens a table named ``field``, else the one that assigns ``field``'s last part inside
    its table. A model string in a key has dots of its own (``models.endpoints.vllm:Qwen2.5-7B.price``), so
    each dot is tried as the table's end, the last first."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    found = next((n for n, line in enumerate(lines) if _header(line) == field), None)
    for table, key in _splits(field):
        if found is not None:
            break
        span = _table_span(lines, table) if table else (0, _next_header(lines, 0))
        found = None if span is None else _assignment(lines, key, *span)
    if found is None:  # the table is not written as a header (inline, or dotted keys): the key anywhere
        found = _assignment(lines, field.rpartition(".")[2], 0, len(lines))
    return None if found is None else found + 1


def _splits(field: str) -> list[tuple[str, str]]:
    """``(table, key)`` for each dot of ``field``, the last first, then ``("", field)``."""
    dots = [i for i, char in enumerate(field) if char == "."]
    return [(field[:i], field[i + 1 :]) for i in reversed(dots)] + [("", field)]


def _assignment(lines: list[str], key: str, start: int, end: int) -> int | None:
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    return next((n for n in range(start, end) if pattern.match(lines[n])), None)


def _header(line: str) -> str | None:
    """The table a header line opens, its keys unquoted (``[models.endpoints."vllm:x"]``:
    ``models.endpoints.vllm:x``); ``None`` for any other line."""
    match = re.match(r"^\s*\[\[?(.*?)\]\]?\s*(#.*)?$", line)
    if match is None:
        return None
    parts = re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", match.group(1))
    return ".".join(part.strip().strip("\"'") for part in parts)


def _table_span(lines: list[str], table: str) -> tuple[int, int] | None:
    """Lines of ``name`` / ``name[i]`` (the i-th ``[[name]]``), header excluded; ``None``: no such header."""
    name, _, index = table.partition("[")
    wanted = int(index.rstrip("]")) if index else 0
    seen = -1
    for number, line in enumerate(lines):
        if _header(line) == name:
            seen += 1
            if seen == wanted:
                return number + 1, _next_header(lines, number + 1)
    return None


def _next_header(lines: list[str], start: int) -> int:
    return next((n for n in range(start, len(lines)) if lines[n].lstrip().startswith("[")), len(lines))
