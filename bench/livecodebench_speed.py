"""refinelab check vs LiveCodeBench's own grader on the 880 o1-mini programs, in one run.

Programs: LiveCodeBench's published o1-mini submissions (one per problem, ../shared/data); tests: the
problems' public tests (the shared file has no private ones). Both graders score every program on the same
tests with the same number of processes and LiveCodeBench's 6 s per test; each is timed whole
(bench/_measure.py), and the per-program verdicts are compared, every disagreement listed.

LiveCodeBench's grader is not on PyPI: give a runnable copy of its ``lcb_runner`` package (its
``evaluation/testing_util.py`` and ``compute_code_generation_metrics.py``) in ``$LCB_DIR`` (the folder
holding ``lcb_runner``); without it that half is skipped with a message. It needs numpy and tqdm.

    LCB_DIR=/path/to/LiveCodeBench python bench/livecodebench_speed.py [--workers 2] [--shared ...]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure, ratio
from real_samples import DEFAULT_SHARED

PROBLEMS = "benchmarks/livecodebench-v5-public-tests.jsonl.gz"
PROGRAMS = "llm-outputs/livecodebench/o1-mini-2024-09-12.json.gz"
GRADER = """
import json, sys
sys.path.insert(0, {lcb!r})
from lcb_runner.evaluation.compute_code_generation_metrics import evaluate_generations
samples, generations = json.load(open({inputs!r}))
results, _ = evaluate_generations(samples, generations, num_process_evaluate={workers}, timeout=6)
json.dump([results[i][0] for i in range(len(samples))], open({out!r}, "w"))
"""


def lcb_inputs(shared: Path) -> tuple[list[str], list[dict[str, str]], list[list[str]]]:
    """Question ids, LiveCodeBench's samples (``input_output``) and generations, in problem-file order."""
    with gzip.open(shared / PROGRAMS, "rt") as handle:
        code = {str(r["question_id"]): str(r["code_list"][0]) for r in json.load(handle)}
    ids, samples, generations = [], [], []
    with gzip.open(shared / PROBLEMS, "rt") as handle:
        for line in handle:
            record = json.loads(line)
            tests = record["public_tests"] or []  # one problem (abc350_c) has none
            entry = _method(str(record.get("starter_code", "")))
            functional = any(t["testtype"] == "functional" for t in tests)
            io: dict[str, object] = {"inputs": [t["input"] for t in tests], "outputs": [t["output"] for t in tests]}
            if functional:
                io["fn_name"] = entry
            ids.append(str(record["question_id"]))
            samples.append({"input_output": json.dumps(io)})
            generations.append([code[str(record["question_id"])]])
    return ids, samples, generations


def _method(starter: str) -> str:
    """The method LeetCode's starter code declares (LiveCodeBench's ``fn_name``)."""
    for line in starter.splitlines():
        stripped = line.strip()
        if stripped.startswith("def ") and "(self" in stripped:
            return stripped[4 : stripped.index("(")]
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args()
    if not (args.shared / PROGRAMS).is_file():
        print(f"{args.shared / PROGRAMS} not found (give --shared or REFINELAB_SHARED_DATA)", file=sys.stderr)
        return 2
    ids, samples, generations = lcb_inputs(args.shared)
    with tempfile.TemporaryDirectory(prefix="lcb-bench-") as name:
        folder = Path(name)
        programs = folder / "samples.jsonl"
        rows = [{"task_id": i, "solution": g[0]} for i, g in zip(ids, generations)]
        programs.write_text("".join(json.dumps(row) + "\n" for row in rows))
        out = folder / "refinelab.jsonl"
        command = [
            sys.executable, "-m", "refinelab", "check", str(programs), "--benchmark", "livecodebench", "--data",
            str(args.shared / PROBLEMS), "--workers", str(args.workers), "--out", str(out),
        ]  # fmt: skip
        mine = measure(command)
        ours = {json.loads(line)["task_id"]: json.loads(line) for line in out.read_text().splitlines()}
        print(f"{len(ids)} o1-mini programs on LiveCodeBench's public tests, {args.workers} processes each")
        print(mine.line("refinelab check"))
        lcb = os.environ.get("LCB_DIR")
        if not lcb or not (Path(lcb) / "lcb_runner" / "evaluation" / "testing_util.py").is_file():
            print("LiveCodeBench's grader: skipped (set LCB_DIR to the folder holding a runnable lcb_runner)")
            return 0
        inputs, graded = folder / "inputs.json", folder / "lcb.json"
        inputs.write_text(json.dumps([samples, generations]))
        script = GRADER.format(lcb=lcb, inputs=str(inputs), workers=args.workers, out=str(graded))
        theirs = measure([sys.executable, "-c", script])
        print(theirs.line("LiveCodeBench grader"))
        verdicts = json.loads(graded.read_text())
        differ = []
        for question, result in zip(ids, verdicts):
            passed = bool(result) and all(v is True for v in result)
            if passed != ours[question]["passed"]:
                failing = next((o for o in ours[question]["outcomes"] if o["verdict"] != "pass"), {"verdict": "pass"})
                differ.append(f"    {question}: refinelab {failing['verdict']}, LiveCodeBench {result}")
        print("\n".join(differ))
        print(f"  time {ratio(mine.wall, theirs.wall)}, memory {ratio(mine.pss_mib, theirs.pss_mib)}; "
              f"verdicts agree on {len(ids) - len(differ)}/{len(ids)}")  # fmt: skip
    print("(a shared machine: one run of each, back to back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
