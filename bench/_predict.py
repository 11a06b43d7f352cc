"""What a run would take at W workers, from the job trace it wrote (``REFINELAB_JOB_TRACE``, see
``src/refinelab/sandbox/_trace.py``), so a 2-core machine can tell whether a change helps at 16.

A run is a sequence of phases separated by a barrier (calibrating, then scoring). Computing reference
values and scoring are one phase where they overlap (check scores a task's programs as soon as its
expected outputs are in: see ``src/refinelab/sandbox/_loading.py``), two where every scoring job was
queued after the last reference job ended. Within a phase, W workers cannot finish before
``total job CPU / W``, nor before the longest chain that cannot be split (a program's jobs one after
another: its stages, and the rerun that confirms its timeout, which counts from ``SPECULATE_AFTER`` into
the run it confirms where the pool starts it beside that run; the pieces of one stage, queued together,
run side by side; a job counts whole in the chain of every program in it, since its programs run in turn
in one process; in a phase of both kinds, the longest reference chain and the longest scoring chain one
after the other, since a task's programs wait for its expected outputs: an upper bound, as the trace does
not say which task a chain is), nor before the driver's own CPU in
that phase (one process judges every result). The phase takes the largest of the three; the run, the
sum over phases, plus the driver's CPU before each phase's first job ended (start-up, loading what the
phase before computed) and after the last job (writing the results), which nothing overlaps. Job CPU
is the children's and the worker's, as the workers measured it.

For a peer that runs as a main process handing work to a pool (evalplus), the same rule from outside
(:func:`peer_prediction`): what its main process did before it started any other process (evalplus computes
HumanEval+'s expected outputs so, one after another, before its pool exists), then the larger of the other
processes' CPU over W and the rest of the main process's own CPU. A lower bound: it assumes the main process
overlaps every bit of its later work with its pool's, and the pool is never idle.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from refinelab.sandbox._pool import SPECULATE_AFTER

WIDTHS = (4, 16, 64)
"""The worker counts every bench predicts."""


@dataclass(frozen=True)
class Phase:
    """One phase of a traced run."""

    name: str
    """``reference`` (expected values) or ``scoring`` (everything else)."""
    jobs: int
    """Sandbox jobs."""
    programs: int
    """Programs run (a program in several jobs counts in each)."""
    cpu: float
    """Job CPU seconds (children and workers)."""
    chain: float
    """The longest chain's CPU seconds."""
    driver: float
    """The driver's CPU seconds from this phase's first job's end to its last job's."""

    def seconds(self, workers: int) -> float:
        """The phase at ``workers`` workers (see the module docstring)."""
        return max(self.cpu / workers, self.chain, self.driver)


@dataclass(frozen=True)
class Held:
    """The driver's event loop held up (``_trace.LoopWatch``): no job starts meanwhile, at any width."""

    longest: float
    """The longest hold-up, in seconds."""
    at: float
    """When it began, in seconds from the first job's start (negative: before it, while the run started up)."""
    cpu: float
    """The loop thread's CPU seconds over it (near ``longest``: a step of the driver's own ran that long)."""
    total: float
    """Every hold-up's seconds, added up."""


@dataclass(frozen=True)
class Trace:
    """A traced run, cut into phases."""

    phases: tuple[Phase, ...]
    """In order."""
    serial: float
    """Driver CPU seconds outside every phase (before each phase's first job, after the last)."""
    held: Held | None = None
    """How long the driver's event loop was held up, where the trace says (``loop_held``)."""

    def predicted(self, workers: int) -> float:
        """Seconds the run would take at ``workers`` workers."""
        return self.serial + sum(phase.seconds(workers) for phase in self.phases)

    @property
    def cpu(self) -> float:
        """Job CPU seconds of the whole run."""
        return sum(phase.cpu for phase in self.phases)

    def floor(self, workers: int) -> float:
        """The CPU floor: every job's CPU spread evenly over ``workers``."""
        return self.cpu / workers

    def scoring(self) -> Phase | None:
        """The scoring phase (with computing reference values, where the two overlapped), if the run had one."""
        return next((phase for phase in self.phases if phase.name.endswith("scoring")), None)


def read_trace(path: Path, main_cpu: float | None = None) -> Trace:
    """The trace at ``path``; ``main_cpu``: the driver process's whole CPU time, measured from outside (what
    it spent after its pool closed counts as serial too)."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    jobs = sorted((r for r in records if "chains" in r), key=lambda r: r["end"])
    closed = [r["driver_cpu"] for r in records if "closed" in r]
    held = next((r["loop_held"] for r in records if "loop_held" in r), None)
    phases: list[Phase] = []
    serial = before = 0.0
    for name, members in _phases(jobs):
        first, last = _number(members[0]["driver_cpu"]), _number(members[-1]["driver_cpu"])
        serial += first - before  # start-up, or what the driver did between phases (loading what was computed)
        phases.append(_phase(name, members, last - first))
        before = last
    end = max([before, *closed])
    serial += end - before
    if main_cpu is not None and main_cpu > end:
        serial += main_cpu - end
    began = min((_number(job["start"]) for job in jobs), default=0.0)
    return Trace(tuple(phases), serial, _held(held, began))


def _held(found: object, began: float) -> Held | None:
    """The closing line's ``loop_held``, with its start counted from ``began`` (the first job's start)."""
    if not isinstance(found, dict):
        return None
    longest, at, cpu, total = (_number(found.get(key, 0.0)) for key in ("longest", "at", "cpu", "total"))
    return Held(longest, at - began if longest else 0.0, cpu, total)


def _number(value: object) -> float:
    assert isinstance(value, (int, float)), value
    return float(value)


def _phases(jobs: list[dict[str, object]]) -> list[tuple[str, list[dict[str, object]]]]:
    """Consecutive jobs of the same kind, as phases (reference values, then scoring); where scoring started
    before the reference values it follows were all in, the two as one phase (``reference+scoring``)."""
    names: list[str] = []
    members: list[list[dict[str, object]]] = []
    for job in jobs:  # in the order they ended
        name = _kind(job)
        if names and names[-1] != name and _submitted(job) < _number(members[-1][-1]["end"]):
            names[-1] = "reference+scoring"
        elif not names or names[-1] not in (name, "reference+scoring"):
            names.append(name)
            members.append([])
        members[-1].append(job)
    return list(zip(names, members))


def _kind(job: dict[str, object]) -> str:
    return "reference" if job["values"] else "scoring"


def _submitted(job: dict[str, object]) -> float:
    return _number(job.get("submitted", job["start"]))


def _phase(name: str, jobs: list[dict[str, object]], driver: float) -> Phase:
    chains: dict[tuple[str, str], list[ChainJob]] = defaultdict(list)
    cpu = 0.0
    programs = 0
    for job in jobs:
        spent = float(job["child_cpu"]) + float(job["worker_cpu"])  # type: ignore[arg-type]
        cpu += spent
        programs += int(job["programs"])  # type: ignore[call-overload]
        queued = job.get("queued") or {}
        assert isinstance(queued, dict)
        submitted = float(job.get("submitted", job["start"]))  # type: ignore[arg-type]
        times = (float(job["start"]), float(job["end"]))  # type: ignore[arg-type]
        for chain in job["chains"]:  # type: ignore[attr-defined]
            # when this chain's own program was queued: a job's first program may be another chain's
            chains[_kind(job), chain].append(
                ChainJob(float(queued.get(chain, submitted)), *times, spent, bool(job.get("overlaps")))
            )
    longest = sum(
        max((chain_seconds(found) for (kind, _), found in chains.items() if kind == wanted), default=0.0)
        for wanted in ("reference", "scoring")
    )
    return Phase(name, len(jobs), programs, cpu, longest, max(driver, 0.0))


@dataclass(frozen=True)
class ChainJob:
    """A job of one chain, as traced."""

    submitted: float
    start: float
    end: float
    cpu: float
    overlaps: bool = False
    """A timeout's confirming rerun of the whole program (see :func:`chain_seconds`)."""


def chain_seconds(jobs: list[ChainJob]) -> float:
    """The CPU seconds of a chain's longest path, had it as many workers as it could use: a job waits for
    the jobs of its chain that had ended when it was queued (a program's next stage waits for its last),
    not for those queued beside it (the pieces of one stage run at once); and a timeout's confirming rerun
    that the pool starts beside the run it confirms once that run has gone on for ``SPECULATE_AFTER`` with
    workers idle (``overlaps``) counts from then, as it runs where the chain is what is left."""
    ordered = sorted(jobs, key=lambda job: job.start)
    ready: list[float] = []  # when each job could start
    for index, job in enumerate(ordered):
        waits = [i for i in range(index) if ordered[i].end <= job.submitted]
        earliest = 0.0
        confirmed = next((i for i in range(index - 1, -1, -1) if not ordered[i].overlaps), None)
        if job.overlaps and confirmed is not None:
            waits = [i for i in waits if i != confirmed]
            earliest = ready[confirmed] + SPECULATE_AFTER
        ready.append(max([earliest, *(ready[i] + ordered[i].cpu for i in waits)]))
    return max((start + job.cpu for start, job in zip(ready, ordered)), default=0.0)


def peer_prediction(tree_cpu: float, main_cpu: float, workers: int, serial_cpu: float = 0.0) -> float:
    """A peer's time at ``workers`` (see the module docstring), a lower bound: ``serial_cpu`` of its main
    process's ``main_cpu`` ran before any other process of its tree (``tree_cpu``) existed."""
    serial = min(serial_cpu, main_cpu)
    return serial + max((tree_cpu - main_cpu) / workers, main_cpu - serial)


def report(trace: Trace, label: str) -> list[str]:
    """Lines describing a trace: its phases, and the prediction at each of :data:`WIDTHS`."""
    lines = [f"  {label}: job CPU {trace.cpu:.1f} s, driver CPU outside the jobs' phases {trace.serial:.1f} s"]
    for phase in trace.phases:
        lines.append(
            f"    {phase.name}: {phase.jobs} jobs, {phase.programs} programs, job CPU {phase.cpu:.1f} s, "
            f"longest chain {phase.chain:.2f} s, driver CPU {phase.driver:.1f} s"
        )
    scoring = trace.scoring()
    if scoring is not None and scoring.programs:
        per = scoring.driver / scoring.programs * 1000
        feeds = scoring.cpu / scoring.driver if scoring.driver > 0 else float("inf")
        lines.append(
            f"    driver CPU per program scored: {per:.2f} ms against {scoring.cpu / scoring.programs * 1000:.2f} ms "
            f"of job CPU: one driver keeps about {feeds:.0f} workers busy"
        )
    if trace.held is not None:
        held = trace.held
        lines.append(
            f"    the driver's event loop held up {held.total:.2f} s in all (over 0.05 s each), at most "
            f"{held.longest:.2f} s ({held.cpu:.2f} s of its CPU) at {held.at:+.1f} s from the first job's start: "
            "no job starts meanwhile"
        )
    for workers in WIDTHS:
        predicted = trace.predicted(workers)
        lines.append(
            f"    at {workers:>2} workers: {predicted:7.1f} s predicted; CPU floor {trace.floor(workers):6.1f} s "
            f"({predicted / max(trace.floor(workers), 1e-9):.2f}x the floor)"
        )
    return lines


def main() -> None:
    """``python bench/_predict.py TRACE [--driver-cpu SECONDS]``: the report of a trace a run wrote."""
    parser = argparse.ArgumentParser(description="What a traced run would take at 4, 16 and 64 workers.")
    parser.add_argument("trace", type=Path, help="the file REFINELAB_JOB_TRACE named")
    parser.add_argument("--driver-cpu", type=float, help="the driver's whole CPU seconds, measured from outside")
    args = parser.parse_args()
    print("\n".join(report(read_trace(args.trace, args.driver_cpu), args.trace.name)))


if __name__ == "__main__":
    main()
