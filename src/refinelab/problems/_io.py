"""Reading benchmark files: JSON or JSON Lines, optionally gzip-compressed, with located errors."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

from refinelab._files import json_problem
from refinelab._location import Location
from refinelab.errors import InputError, UserError

T = TypeVar("T")

_BOM = b"\xef\xbb\xbf"
"""UTF-8's byte order mark: Windows tools start files with it; RFC 8259 lets a reader ignore it."""


def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InputError(path, None, None, f"corrupt gzip data ({exc})") from None
    try:
        return raw.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, None, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, object]]]:
    """Yield ``(line_number, record)`` for every non-blank line; each line must be a JSON object.

    The file is read a line at a time (LiveCodeBench's files are GiB-sized), gzip-compressed or not.
    """
    path = Path(path)
    for number, raw in _lines(path):
        if raw.strip():
            yield number, _record(path, number, raw)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    number = 0
    with _open_binary(path) as handle:
        try:
            for number, raw in enumerate(handle, start=1):
                yield number, raw.removeprefix(_BOM) if number == 1 else raw
        except (OSError, EOFError) as exc:
            raise InputError(path, number + 1, None, f"corrupt gzip data ({exc})") from None


@contextmanager
def _open_binary(path: Path) -> Iterator[IO[bytes]]:
    """The file's bytes, decompressed when it is gzip."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    with handle:
        if handle.peek(2)[:2] != b"\x1f\x8b":
            yield handle
            return
        with gzip.GzipFile(fileobj=handle, mode="rb") as unpacked:
            yield unpacked  # type: ignore[misc]


def _record(path: Path, number: int, raw: bytes) -> dict[str, object]:
    try:
        line = raw.decode("utf-8").rstrip("\r\n")  # the line ending is not part of the record
    except UnicodeDecodeError as exc:
        raise InputError(path, number, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(path, number, None, f"malformed JSON ({json_problem(exc)})") from None
    if not isinstance(record, dict):
        raise InputError(path, number, None, f"expected a JSON object, got {type(record).__name__}")
    return record


def read_records(path: str | Path) -> Iterator[tuple[int | None, dict[str, object]]]:
    """Records from a JSON Lines file, or from a file holding one JSON list of objects.

    For a JSON list the position reported is the record's index (as ``record N``) rather than a line.
    """
    path = Path(path)
    if not _starts_with_list(path):
        yield from read_jsonl(path)
        return
    text = _open_text(path)
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, None, f"malformed JSON ({json_problem(exc)})") from None
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError(path, None, f"record {index}", f"expected a JSON object, got {type(record).__name__}")
        yield None if index is None else index + 1, record


def _starts_with_list(path: Path) -> bool:
    """True when the file's first non-blank character is ``[`` (a JSON list, not JSON Lines)."""
    with _open_binary(path) as handle:
        try:
            chunk = handle.read(4096).removeprefix(_BOM)  # a BOM starts the file, or is absent
            while chunk:
                if stripped := chunk.lstrip():
                    return stripped.startswith(b"[")
                chunk = handle.read(4096)
        except (OSError, EOFError) as exc:
            raise InputError(path, None, None, f"corrupt gzip data ({exc})") from None
    return False


def field(record: dict[str, object], name: str, kind: type[T], where: Location) -> T:
    """A required field of the given type, or an :class:`InputError` naming file, line and field."""
    if name not in record:
        raise where.error(name, "missing")
    value = record[name]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # type: ignore[return-value]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise where.error(name, f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def optional(record: dict[str, object], name: str, kind: type[T], where: Location, default: T) -> T:
    """An optional field: ``default`` when absent or null, else checked like :func:`field`."""
    if record.get(name) is None:
        return default
    return field(record, name, kind, where)
