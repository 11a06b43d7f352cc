"""``refinelab view --out DIR``: the viewer as files that open from ``file://`` with no network."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from refinelab.errors import UserError
from refinelab.view._site import Source

MARKER = ".refinelab-site"
"""A file in every site the viewer wrote: only such a folder is ever replaced."""


def write_site(source: Source, out: Path) -> int:
    """Write every file of ``source`` into ``out`` (replacing a site written before, whole or not at
    all); the number of files written."""
    if out.exists() and not (out / MARKER).exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: exists and is not a site refinelab wrote; choose an empty or new folder")
    staging = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        count = _write_all(source, staging)
        (staging / MARKER).write_text("written by refinelab view --out; replaced whole on the next write\n")
        _swap(staging, out)
    except OSError as exc:
        raise UserError(f"{out}: cannot write the site: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count


def _write_all(source: Source, root: Path) -> int:
    count = 0
    for path in source.paths():
        found = source.get(path)
        if found is None:
            raise AssertionError(f"the site lists {path} but cannot produce it")
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(found[1])
        count += 1
    return count


def _swap(staging: Path, out: Path) -> None:
    """Replace ``out`` by ``staging``; the old site is removed only once the new one is in place."""
    old = out.with_name(f".{out.name}.{os.getpid()}.old")
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
