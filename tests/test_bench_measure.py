"""``bench/_measure.py``: what the side-by-side benches measure of a whole command, here of small commands
whose CPU before and after they start another process is known."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

SPIN = "import time\nstart = time.process_time()\nwhile time.process_time() - start < {seconds}:\n    pass\n"


@pytest.fixture(scope="module")
def measure() -> Iterator[ModuleType]:
    path = Path(__file__).parents[1] / "bench" / "_measure.py"
    spec = importlib.util.spec_from_file_location("bench_measure", path)
    assert spec is not None and spec.loader is not None
    module = sys.modules["bench_measure"] = importlib.util.module_from_spec(spec)  # its dataclasses look it up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["bench_measure"]


def test_a_command_that_starts_no_process_spent_all_of_its_cpu_alone(measure: ModuleType) -> None:
    found = measure.measure([sys.executable, "-c", SPIN.format(seconds=0.5)])
    assert found.returncode == 0
    assert found.main_cpu > 0
    assert found.serial_cpu == found.main_cpu


def test_what_a_command_spent_alone_stops_at_its_first_other_process(measure: ModuleType, tmp_path: Path) -> None:
    """The CPU counted as spent alone is at most what the command had spent when it started a child (it writes
    that down), however the samples fell: counting all of it would make a peer's pool look serial."""
    record = tmp_path / "at-fork"
    code = (
        SPIN.format(seconds=0.5)
        + "import os, subprocess, sys\n"
        + f"open({str(record)!r}, 'w').write(repr(sum(os.times()[:2])))\n"
        + f"subprocess.run([sys.executable, '-c', {SPIN.format(seconds=0.3)!r}], check=True)\n"
        + SPIN.format(seconds=0.5)
    )
    found = measure.measure([sys.executable, "-c", code])
    assert found.returncode == 0
    at_fork = float(record.read_text())
    assert found.serial_cpu <= at_fork + 0.02  # the kernel's ticks (10 ms) and the clock read just before
    assert found.main_cpu >= at_fork
    assert found.cpu >= found.main_cpu + 0.25  # the child's CPU is the tree's
