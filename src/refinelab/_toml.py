"""Reading TOML inputs with errors that name the file, the line and the field."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from refinelab._errors import InputError, UserError

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
    """An :class:`InputError` for ``field`` (dotted, e.g. ``benchmarks.limit``) with the line where the
    field's last part is written, when it can be found."""
    return InputError(path, line_of(path, field.rsplit(".", 1)[-1]), field, problem)


def line_of(path: Path, key: str) -> int | None:
    """The first line that assigns ``key`` or opens a table named ``key`` (None if not found)."""
    pattern = re.compile(rf"^\s*(\[\[?\s*(\w[\w.-]*\.)?{re.escape(key)}\s*\]\]?|\"?{re.escape(key)}\"?\s*=)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return next((number for number, line in enumerate(lines, 1) if pattern.match(line)), None)
