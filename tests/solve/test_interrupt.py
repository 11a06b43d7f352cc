"""Ctrl-C (a kernel interrupt) during the synchronous ``solve()`` returns the best attempt so far."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import os, signal, threading
    from refinelab import solve
    from refinelab.solve import SolveOptions
    from refinelab.testing import serve

    DRAFT = "```python\\ndef fibonacci(n):\\n    return [0, 1][:max(n, 2)]\\n```"
    release = threading.Event()
    asked = []

    def reply(body):
        if any("Test results" in str(m["content"]) for m in body["messages"]):
            release.wait(60)  # the refinement is still in flight when the interrupt comes
        return DRAFT

    def interrupt_once(progress):
        if progress.attempt == 1 and progress.phase == "generating" and not asked:
            asked.append(True)
            threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()

    with serve(reply) as server:
        options = SolveOptions(strategy="exec-refine", base_url=server.base_url, store=os.environ["STORE"],
                               on_progress=interrupt_once)
        try:
            solution = solve("def fibonacci(n):", "coder", tests=["fibonacci(1) == [0]", "fibonacci(2) == [0, 1]"],
                             options=options)
        finally:
            release.set()
    print(solution.verdict)
    print(solution.evidence.stop_reason, solution.evidence.attempts)
    """
)


def test_interrupting_solve_returns_the_best_attempt(tmp_path: Path) -> None:
    source = str(Path(__file__).resolve().parents[2] / "src")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": source, "STORE": str(tmp_path / "s.sqlite")}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["UNVERIFIED: passes 1 of 2 given tests", "interrupted 1"]
