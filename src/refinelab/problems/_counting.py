"""Counting a benchmark file's records without loading it: JSON Lines lines, JSON list items, Parquet rows."""

from __future__ import annotations

import json
from typing import Any, BinaryIO

from refinelab.errors import MissingDependency, UserError

CHUNK = 8 * 1024 * 1024
"""Bytes read at a time (LiveCodeBench lines can be hundreds of MiB long: never read a line whole)."""


def count_records(handle: BinaryIO, name: str) -> int:
    """Records in the file open as ``handle`` (from its current position), by the kind ``name`` says."""
    if name.endswith(".parquet"):
        return parquet_rows(handle)
    if name.endswith(".json"):
        try:
            data = json.loads(handle.read())
        except (ValueError, UnicodeDecodeError) as exc:
            raise UserError(f"{name}: not valid JSON ({exc})") from None
        if not isinstance(data, list):
            raise UserError(f"{name}: expected one JSON list of records")
        return len(data)
    return _nonblank_lines(handle)


def _nonblank_lines(handle: BinaryIO) -> int:
    count, open_line = 0, False
    while chunk := handle.read(CHUNK):
        parts = chunk.split(b"\n")
        for index, part in enumerate(parts):
            open_line = open_line or bool(part.strip())
            if index < len(parts) - 1:  # a newline ended this line
                count += open_line
                open_line = False
    return count + open_line


def parquet_rows(handle: BinaryIO) -> int:
    """Rows in a Parquet file, from its footer."""
    parquet = pyarrow_parquet()
    try:
        return int(parquet.ParquetFile(handle).metadata.num_rows)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own error types for a damaged file
        raise UserError(f"not a readable Parquet file ({exc})") from None


def pyarrow_parquet() -> Any:
    """``pyarrow.parquet``, or a user error naming the extra that installs it."""
    try:
        import pyarrow.parquet  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise MissingDependency(
            "CodeContests is published as Parquet, which needs pyarrow: pip install 'refinelab[parquet]' "
            "(or pass --data FILE)"
        ) from None
    return pyarrow.parquet
