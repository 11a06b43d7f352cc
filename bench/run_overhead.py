"""``run``'s cost per unit against ``check``'s cost per program, on the same real programs.

``refinelab run`` does single pass on HumanEval (164 problems, ``--repeats`` draws each) at 64 units in
flight against a local OpenAI-compatible server that answers at once with real programs real models
wrote (tests/experiment/real_server.py; the server runs in a process of its own, so its work is not
counted); then ``refinelab check`` scores the programs the run stored. Each command is timed whole, at
two sizes, and the cost per unit (per program) is the difference over the difference in units: start-up,
loading and preparing are the same at both sizes and drop out. Target: run <= 2x check per program.
Run from the repository root:

    python bench/run_overhead.py [--repeats 1 4] [--shared ../shared/data] [--profile OUT.svg]

``--profile`` records the larger run with py-spy (``pip install py-spy``) into a flame graph.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = Path(os.environ.get("REFINELAB_SHARED_DATA") or ROOT.parent / "shared" / "data")
SERVER = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.experiment.real_server import real_answers
from refinelab.testing import FakeOpenAI
answers = real_answers(Path({shared!r}), [f"HumanEval/{{i}}" for i in range(164)], width=1)
server = FakeOpenAI(answers)
print(server.base_url, flush=True)
server.serve_forever()
"""
SPEC = """name = "run-overhead"
actors = ["vllm:real-programs"]
strategies = ["single-pass"]
concurrency = 64
repeats = {repeats}

[[benchmarks]]
name = "humaneval"

[models.endpoints."vllm:real-programs"]
concurrency = 64
"""


def refinelab() -> list[str]:
    return [sys.executable, "-m", "refinelab"]


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def run_once(folder: Path, base_url: str, repeats: int, profile: Path | None) -> tuple[float, Path]:
    """Seconds for ``run`` with ``repeats`` draws of every problem (a fresh store and response cache)."""
    spec, store = folder / f"spec{repeats}.toml", folder / f"store{repeats}.sqlite"
    spec.write_text(SPEC.format(repeats=repeats))
    env = {**os.environ, "REFINELAB_CACHE_DIR": str(folder / f"cache{repeats}"), "XDG_CACHE_HOME": str(folder)}
    command = [*refinelab(), "run", str(spec), "--store", str(store), "--base-url", base_url, "--quiet"]
    if profile is not None:
        command = ["py-spy", "record", "--subprocesses", "-o", str(profile), "--", *command]
    return timed(command, env), store


def stored_programs(store: Path, path: Path) -> int:
    """Write the stored attempts' programs as a samples file; how many."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT problem, code FROM attempts WHERE code IS NOT NULL").fetchall()
    path.write_text("".join(json.dumps({"task_id": p.split("/", 1)[1], "solution": c}) + "\n" for p, c in rows))
    return len(rows)


def check_once(samples: Path) -> float:
    return timed([*refinelab(), "check", str(samples), "--benchmark", "humaneval"], dict(os.environ))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, nargs=2, default=[1, 4], metavar=("SMALL", "LARGE"))
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--profile", type=Path, help="record the larger run with py-spy into this SVG")
    args = parser.parse_args()
    if not (args.shared / "llm-outputs").is_dir():
        print(f"shared data not found at {args.shared} (give --shared or REFINELAB_SHARED_DATA)", file=sys.stderr)
        return 2
    small, large = args.repeats
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(root=str(ROOT), shared=str(args.shared))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            run_small, store_small = run_once(folder, base_url, small, None)
            run_large, store_large = run_once(folder, base_url, large, args.profile)
            units_small = stored_programs(store_small, folder / "small.jsonl")
            units_large = stored_programs(store_large, folder / "large.jsonl")
            check_small, check_large = check_once(folder / "small.jsonl"), check_once(folder / "large.jsonl")
    finally:
        server.terminate()
        server.wait()
    units = units_large - units_small
    per_unit = (run_large - run_small) / units * 1000
    per_program = (check_large - check_small) / units * 1000
    print(f"run:   {units_small} units {run_small:.2f} s, {units_large} units {run_large:.2f} s")
    print(f"check: {units_small} programs {check_small:.2f} s, {units_large} programs {check_large:.2f} s")
    print(f"run {per_unit:.2f} ms per unit, check {per_program:.2f} ms per program: {per_unit / per_program:.2f}x")
    print("(whole processes timed on this machine; the target is run <= 2x check)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
