"""A correct program is not timed out because the machine is busy.

The test makes the machine busy itself, boundedly: the test process, the sandbox workers it starts
and four busy child processes share one CPU (affinity is inherited), so the candidate gets about a
fifth of it. Each busy child stops on its own after a deadline and is killed by its PID afterwards.
The candidate needs 1.5 s of CPU under a 2 s CPU limit; waiting for the CPU is not its fault.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from refinelab.problems import StdioTest
from refinelab.sandbox import Limits, Suite
from tests.conftest import with_pool

pytestmark = pytest.mark.slow

BUSY = "import time\nend = time.monotonic() + 40\nwhile time.monotonic() < end:\n    pass\n"
NEEDS_CPU = (
    "import time\nstart = time.process_time()\nwhile time.process_time() - start < 1.5:\n    pass\nprint('done')\n"
)
SLEEPS = "import time\ntime.sleep(60)\n"


@pytest.fixture
def one_busy_cpu() -> Iterator[None]:
    """This process and everything it starts on one CPU, with four busy processes on it."""
    cpu = min(os.sched_getaffinity(0))
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(4)]  # inherit the affinity
    try:
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()
        os.sched_setaffinity(0, saved)


def run(code: str, limits: Limits) -> str:
    suite = Suite.of([StdioTest("", "done\n")], kind="stdio")
    result = with_pool(lambda pool: pool.run(code, suite, limits=limits), workers=1)
    return result.outcomes[0].verdict


def test_a_cpu_bound_program_passes_on_a_busy_cpu(one_busy_cpu: None) -> None:
    # The wall backstop (2 x 2 s + 1 s = 5 s) is far below the ~7.5 s this takes on a fifth of a CPU.
    assert run(NEEDS_CPU, Limits(cpu_seconds=2.0, wall_factor=2.0)) == "pass"


def test_a_sleeping_program_still_meets_the_wall_backstop(one_busy_cpu: None) -> None:
    assert run(SLEEPS, Limits(cpu_seconds=1.0, wall_factor=2.0)) == "timeout"
