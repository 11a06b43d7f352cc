"""refinelab check vs evalplus's own evaluator on HumanEval+, on real (mostly wrong) programs, in one run.

Samples: bench/real_samples.py (``ten``: 1,640, ten per task, repeats included; ``hundred``: 16,400, 100 a
task, ``ten``'s programs as ten distinct variants each; ``distinct``: 1,164, each
program once). Both evaluators score the same file with the same number of workers, each timed whole
(start-up, loading and computing HumanEval+'s expected outputs included): first with empty output caches
(cold: refinelab computes its outputs, evalplus its ground truth), then with the caches they wrote
(warm). Beside each time: the peak memory of the whole process tree (bench/_measure.py) and whether the
per-sample verdicts agree; every disagreement is listed with both sides' outcomes. Last, the floor: the
same programs on the same tests in a bare interpreter (a forked process per program, each test under an
interval timer at the same limit, stopping at the first failure; no sandbox, no rerun): the programs'
own CPU time per worker, which no harness can go below, and that bare harness's wall time after its
problems are loaded.

Beside each measurement, the time each side would take at 4, 16 and 64 workers, predicted from this run
(bench/_predict.py): refinelab's from its job trace (the larger of its job CPU over W, its longest chain
and its driver's CPU, phase by phase), evalplus's from its process tree (what its main process spent before
it started any other process, which is where evalplus computes its ground truth, then the larger of its
other processes' CPU over W and the rest of its main process's: a lower bound, so the predicted ratio is if
anything unfair to refinelab); and both at the width the run had, beside what it took.

    python bench/humanevalplus_speed.py [--set ten|distinct] [--workers 2] [--shared ../shared/data]

evalplus comes from PyPI (``pip install evalplus``); its HumanEval+ file is the shared one
(``HUMANEVAL_OVERRIDE_PATH``), its cache a fresh ``XDG_CACHE_HOME``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import Measured, measure, ratio
from _predict import WIDTHS, Trace, peer_prediction, read_trace, report
from real_samples import DEFAULT_SHARED, rows

from refinelab.check import read_samples
from refinelab.problems import AssertTest, CallTest, Problem
from refinelab.sandbox import Limits, WorkerPool, prepare_benchmark, values_match
from refinelab.sandbox._worker.child import entry_point as checked_entry  # the same wrapper refinelab's judge sees

PLUS = "benchmarks/humanevalplus-v0.1.10.jsonl.gz"


def refinelab_command(samples: Path, data: Path, cache: Path, out: Path, workers: int) -> list[str]:
    return [
        sys.executable, "-m", "refinelab", "check", str(samples), "--benchmark", "humaneval-plus", "--data", str(data),
        "--cache-dir", str(cache), "--workers", str(workers), "--out", str(out),
    ]  # fmt: skip


def evalplus_run(
    samples: Path, data: Path, xdg: Path, workers: int, folder: Path
) -> tuple[Measured, dict[str, object]]:
    """evalplus.evaluate on a fresh copy of the samples (it reuses results it finds beside them)."""
    folder.mkdir()
    copy = folder / "samples.jsonl"
    shutil.copy(samples, copy)
    env = {**os.environ, "HUMANEVAL_OVERRIDE_PATH": str(data), "XDG_CACHE_HOME": str(xdg)}
    command = [sys.executable, "-m", "evalplus.evaluate", "--dataset", "humaneval", "--samples", str(copy)]
    measured = measure([*command, "--parallel", str(workers)], env=env)
    results = json.loads((folder / "samples_eval_results.json").read_text())
    return measured, results


def evalplus_verdicts(results: dict[str, object], order: list[tuple[str, int]]) -> list[tuple[bool, str]]:
    """Per sample (file order): passed, and evalplus's base/plus statuses."""
    by_task = results["eval"]
    assert isinstance(by_task, dict)
    found = []
    for task, index in order:
        entry = by_task[task][index]
        found.append(
            (entry["base_status"] == entry["plus_status"] == "pass", f"{entry['base_status']}/{entry['plus_status']}")
        )
    return found


def refinelab_verdicts(out: Path) -> list[tuple[bool, str]]:
    found = []
    for line in out.read_text().splitlines():
        record = json.loads(line)
        failing = next((o for o in record["outcomes"] if o["verdict"] != "pass"), None)
        found.append((bool(record["passed"]), "pass" if failing is None else failing["verdict"]))
    return found


def sample_order(samples: Path) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    order = []
    for line in samples.read_text().splitlines():
        task = json.loads(line)["task_id"]
        order.append((task, counts.get(task, 0)))
        counts[task] = counts.get(task, 0) + 1
    return order


# --- the floor -------------------------------------------------------------------------------------------


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError


def _floor_one(problem: Problem, seconds: list[float], program: str) -> bool:
    """A program on its problem's hidden tests in this (forked, bare) interpreter, first failure stops."""
    signal.signal(signal.SIGPROF, _alarm)
    signal.signal(signal.SIGALRM, _alarm)
    try:
        namespace: dict[str, object] = {"__name__": "__candidate__"}
        exec(compile(program, "<candidate>", "exec", dont_inherit=True), namespace)
        scope = dict(namespace, candidate=checked_entry(namespace, str(problem.entry_point)))
        scope[str(problem.entry_point)] = scope["candidate"]
        for test, limit in zip(problem.hidden_tests, seconds):
            signal.setitimer(signal.ITIMER_PROF, limit)  # CPU time, as refinelab judges
            signal.setitimer(signal.ITIMER_REAL, 3 * limit + 1)  # a backstop for a program that sleeps
            if isinstance(test, CallTest):
                value = eval(test.expr, scope)
                if not values_match(value, test.expected, test.atol):
                    return False
            elif isinstance(test, AssertTest):
                exec(test.code, scope)
    except BaseException:
        return False
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
    return True


def _forked(jobs: list[tuple[Problem, list[float], str]], workers: int) -> tuple[list[bool], float]:
    """Each job in a forked child, ``workers`` at a time; the verdicts, and the children's CPU seconds."""
    verdicts = [False] * len(jobs)
    cpu = 0.0
    running: dict[int, tuple[int, int]] = {}
    pending = iter(enumerate(jobs))
    while True:
        while len(running) < workers and (job := next(pending, None)) is not None:
            index, (problem, seconds, program) = job
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child ends with os._exit
                verdict = _floor_one(problem, seconds, program)
                os.write(write, f"{int(verdict)} {time.process_time()}".encode())
                os._exit(0)
            os.close(write)
            running[pid] = (index, read)
        if not running:
            return verdicts, cpu
        pid, _ = os.wait()
        index, read = running.pop(pid)
        reply = os.read(read, 64).split()
        os.close(read)
        verdicts[index] = reply[:1] == [b"1"]
        cpu += float(reply[1]) if len(reply) == 2 else 0.0


def floor(samples: Path, data: Path, cache: Path, workers: int) -> tuple[float, float, list[bool]]:
    """The floor (see the module docstring): the forked harness's wall seconds, the programs' own CPU
    seconds per worker (what no harness can go below), and the verdicts."""

    async def load() -> list[Problem]:
        async with WorkerPool(workers=workers) as pool:
            return await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=cache)

    problems = asyncio.run(load())
    limits = Limits().following_reference()
    by_id = {p.id: (p, [limits.test_seconds(t) for t in p.hidden_seconds]) for p in problems}
    jobs = [(*by_id[s.problem.id], s.program) for s in read_samples(samples, problems)]
    gc.freeze()  # forked children touch only their own problem's objects
    start = time.perf_counter()
    verdicts, cpu = _forked(jobs, workers)
    return time.perf_counter() - start, cpu / workers, verdicts


# --- the report ------------------------------------------------------------------------------------------


def agreement(order: list[tuple[str, int]], mine: list[tuple[bool, str]], theirs: list[tuple[bool, str]]) -> str:
    differ = [(o, m, t) for o, m, t in zip(order, mine, theirs) if m[0] != t[0]]
    for (task, index), m, t in differ:
        ours, peer = "pass" if m[0] else "fail", "pass" if t[0] else "fail"
        print(f"    {task} #{index}: refinelab {ours} ({m[1]}), evalplus {peer} ({t[1]})")
    return f"verdicts agree on {len(order) - len(differ)}/{len(order)}"


def predictions(trace: Trace, measured: tuple[Measured, Measured], run: str, ran: int) -> None:
    """Both sides at 4, 16 and 64 workers, predicted from this run (see the module docstring), and at the
    ``ran`` workers of the run itself beside what it took (how far the prediction is from a measurement)."""
    mine, theirs = measured
    print("\n".join(report(trace, f"refinelab ({run})")))
    print(
        f"  evalplus ({run}): tree CPU {theirs.cpu:.1f} s, main process {theirs.main_cpu:.1f} s, "
        f"{theirs.serial_cpu:.1f} s of it before any other process"
    )
    for workers in WIDTHS:
        ours, peer = trace.predicted(workers), _peer(theirs, workers)
        print(f"    at {workers:>2} workers: refinelab {ours:6.1f} s, evalplus >= {peer:6.1f} s: {ratio(ours, peer)}")
    print(
        f"    as run, at {ran} workers: refinelab {trace.predicted(ran):.1f} s predicted, {mine.wall:.1f} s taken; "
        f"evalplus >= {_peer(theirs, ran):.1f} s, {theirs.wall:.1f} s taken"
    )


def _peer(theirs: Measured, workers: int) -> float:
    return peer_prediction(theirs.cpu, theirs.main_cpu, workers, theirs.serial_cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=["ten", "distinct", "hundred"], default="ten")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args()
    data = args.shared / PLUS
    if not data.is_file():
        print(f"{data} not found (give --shared or REFINELAB_SHARED_DATA)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="plus-bench-") as name:
        folder = Path(name)
        samples = folder / "samples.jsonl"
        samples.write_text("".join(json.dumps(row) + "\n" for row in rows(args.shared, args.set)))
        order = sample_order(samples)
        print(f"{len(order)} real programs ({args.set}), {args.workers} workers each")
        for run in ("cold", "warm"):
            out, trace = folder / f"{run}.out.jsonl", folder / f"{run}.jobs.jsonl"
            env = {**os.environ, "REFINELAB_JOB_TRACE": str(trace)}
            mine = measure(refinelab_command(samples, data, folder / "rl-cache", out, args.workers), env=env)
            theirs, results = evalplus_run(samples, data, folder / "xdg", args.workers, folder / f"evalplus-{run}")
            print(mine.line(f"refinelab check ({run} cache)"))
            print(theirs.line(f"evalplus.evaluate ({run} cache)"))
            verdicts = agreement(order, refinelab_verdicts(out), evalplus_verdicts(results, order))
            memory = ratio(mine.pss_mib, theirs.pss_mib)
            print(f"  {run}: time {ratio(mine.wall, theirs.wall)}, memory {memory}; {verdicts}")
            predictions(read_trace(trace, mine.main_cpu), (mine, theirs), run, args.workers)
        seconds, cpu, bare = floor(samples, data, folder / "rl-cache", args.workers)
        mine_warm = refinelab_verdicts(folder / "warm.out.jsonl")
        same = sum(b == m[0] for b, m in zip(bare, mine_warm))
        print(f"{'bare-interpreter floor':<34} {cpu:8.1f} s   (the programs' own CPU time per worker)")
        print(f"  a forked bare harness took {seconds:.1f} s after loading; verdicts agree with refinelab's on "
              f"{same}/{len(bare)}")  # fmt: skip
        print(f"  refinelab (warm) / floor: {ratio(mine.wall, cpu)}; / bare harness: {ratio(mine.wall, seconds)}")
    print("(a shared machine: ratios from one run, each pair run back to back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
