"""What ``solve`` is asked: the prompt, its tests, and the problem built from them.

The kind is detected when not given: ``stdio`` when stdin/stdout pairs are given, ``function`` when the
prompt or the signature defines a function or the tests call one, ``stdio`` when the prompt speaks of
standard input, else ``function``.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from refinelab.errors import UserError
from refinelab.problems import AssertTest, CallTest, Problem, ProblemKind, StdioTest, prompt_examples
from refinelab.runtime import NOT_GIVEN, NotGiven, Settings
from refinelab.sandbox import IsolationMode, Limits
from refinelab.solve._progress import SolveProgress
from refinelab.solve._tests import GivenTest, TestSet, called_names, describe, parse_given_tests
from refinelab.strategies import Budget

# a ``def`` starting a line, or written inline in a one-line prompt ("Return ... def fib(n):", "`def fib(n)`")
_DEF = re.compile(r"(?:^|(?<=[\s`]))def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.MULTILINE)
_CLASS = re.compile(r"^([ \t]*)class[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_STDIN_WORDS = re.compile(r"\b(stdin|standard input|reads? (?:from )?input|input format)\b", re.IGNORECASE)
_SHOWN_TESTS = 10
_ASSERT = re.compile(r"^[ \t]*(assert\b.*)$", re.MULTILINE)


@dataclass(frozen=True)
class SolveOptions:
    """How to solve: everything but the prompt, the model and the tests (defaults suit a person at a terminal)."""

    signature: str | None = None
    """Starter code: a signature (``def fib(n: int) -> list[int]:``) or a class skeleton."""
    strategy: str = "verified"
    """Any registered strategy, with arguments: ``exec-refine(max_iters=3)``."""
    budget: Budget = field(default_factory=Budget)
    """Limits on calls, tokens and dollars."""
    reasoning_effort: str | None = None
    """How long a reasoning model thinks (``low``, ``high``, ``none``, a thinking-token budget such as
    ``"2048"``): every call of the solve asks for it; ``None``: the model's default."""
    base_url: str | Sequence[str] | None = None
    """An OpenAI-compatible server for a model given by name (several: replicas of the model)."""
    config: Path | None = None
    """The project config with ``[models]`` aliases (default: ``refinelab.toml`` here or in a parent)."""
    store: Path | None = None
    """Where the solve is recorded (default: ``$REFINELAB_STORE``, else ``.refinelab/store.sqlite``)."""
    record: bool = True
    """Record the solve in the store (``refinelab report`` lists it)."""
    cache: Path | None = None
    """The response cache (default: ``responses.sqlite`` beside the store); repeated requests are free."""
    timeout: float = Limits().cpu_seconds
    """CPU seconds per test."""
    isolation: IsolationMode | NotGiven = NOT_GIVEN
    """Sandbox mode (not given: the ``sandbox`` setting's, else ``auto``)."""
    cluster: str | None = None
    """A Ray cluster to run the programs on (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``); ``None``: this
    machine (see docs/design/cluster.md)."""
    environ: Mapping[str, str] | None = None
    """Environment for API keys and defaults (default: the process's)."""
    on_progress: Callable[[SolveProgress], None] | None = None
    """Called as the work advances (attempt, tests passing, tokens, elapsed)."""
    settings: Settings | None = None
    """Settings resolved already (the command line resolves its flags once and hands them over); ``None``:
    resolved here from ``config``, ``store``, ``cache``, ``cluster`` and ``environ`` over ``REFINELAB_*``, the
    project config and the defaults (those fields are then not read)."""


@dataclass(frozen=True)
class Task:
    """A solve's problem and its tests, with where each test came from."""

    problem: Problem
    """What strategies see; the given tests are its visible and its hidden tests."""
    tests: TestSet
    """Every test with its origin."""

    @property
    def generated(self) -> bool:
        """The tests were written by the model (none were given)."""
        return bool(self.tests.tests) and all(t.origin == "generated" for t in self.tests.tests)

    def with_tests(self, tests: TestSet) -> Task:
        """This task with other tests (generated ones, when none were given)."""
        visible = tuple(t.test for t in tests.tests)
        setup = "\n".join(p for p in (self.problem.test_setup, tests.setup) if p)
        problem = replace(self.problem, visible_tests=visible, hidden_tests=visible, test_setup=setup)
        return Task(problem, tests)


def build_task(
    prompt: str,
    tests: str | Sequence[str],
    io: Sequence[tuple[str, str]],
    kind: ProblemKind | None,
    signature: str | None,
) -> Task:
    """The problem for a prompt and its tests; a :class:`UserError` for what cannot work."""
    if not prompt.strip():
        raise UserError("the prompt is empty: say what the code should do")
    given = _given(tests)
    pairs = [_pair(stdin, stdout) for stdin, stdout in io]
    kind = kind or _detect_kind(prompt, signature, given, pairs)
    if kind == "stdio":
        return _stdio_task(prompt, given, pairs, signature)
    if pairs:
        raise UserError("stdin/stdout pairs (--io) need kind 'stdio'; a function is tested with assertions (--test)")
    entry = _entry_point(prompt, signature, given)
    settled = {t.test.expr for t in given.tests if isinstance(t.test, CallTest)}
    examples = prompt_examples(f"{prompt}\n{signature or ''}", entry, settled)
    found = given.plus(TestSet(tuple(GivenTest(t, "docstring") for t in examples)))
    return Task(_problem(prompt, found, "function", entry, signature), found)


def _pair(stdin: str, stdout: str) -> StdioTest:
    return StdioTest(stdin if stdin.endswith("\n") or not stdin else stdin + "\n", stdout)


def _given(tests: str | Sequence[str]) -> TestSet:
    sources = [tests] if isinstance(tests, str) else list(tests)
    found = TestSet()
    for index, source in enumerate(sources):
        found = found.plus(parse_given_tests(source, f"test {index + 1}" if len(sources) > 1 else "tests"))
    return found


def _detect_kind(prompt: str, signature: str | None, given: TestSet, pairs: list[StdioTest]) -> ProblemKind:
    if pairs:
        return "stdio"
    if signature or given.tests or _DEF.search(prompt):
        return "function"
    return "stdio" if _STDIN_WORDS.search(prompt) else "function"


def _stdio_task(prompt: str, given: TestSet, pairs: list[StdioTest], signature: str | None) -> Task:
    if given.tests:
        raise UserError("assertions (--test) call a function; a stdin/stdout program is tested with --io pairs")
    found = TestSet(tuple(GivenTest(p, "io") for p in dict.fromkeys(pairs)))  # a pair given twice is one test
    return Task(_problem(prompt, found, "stdio", None, signature), found)


def _problem(prompt: str, found: TestSet, kind: ProblemKind, entry: str | None, signature: str | None) -> Problem:
    """The problem strategies see: the user's own tests shown after the prompt, and run as its visible and
    its hidden tests."""
    tests = tuple(t.test for t in found.tests)
    shown = _with_tests_shown(prompt, [t for t in found.tests if t.origin != "docstring"])
    return Problem(
        _problem_id(prompt, found),
        shown,
        kind,
        visible_tests=tests,
        hidden_tests=tests,
        entry_point=entry,
        starter_code=signature or "",
        test_setup=found.setup,
    )


def _entry_point(prompt: str, signature: str | None, given: TestSet) -> str | None:
    """The function the tests call: the signature's, else the prompt's last ``def``, else the first
    function the tests call, else the first the prompt's own asserts call (MBPP's prompts show one:
    ``Your code should pass this test: assert f(1) == 2``). A method of a class skeleton is
    ``Class.method`` (LeetCode's ``Solution``)."""
    for text in (signature or "", prompt):
        found = _last_def(text)
        if found is not None:
            return found
    called = called_names(given.tests) or called_names(_shown_asserts(prompt))
    return called[0] if called else None


def _shown_asserts(prompt: str) -> list[GivenTest]:
    """The assert lines the prompt shows that are Python."""
    found = []
    for line in _ASSERT.findall(prompt):
        try:
            ast.parse(line)
        except SyntaxError:
            continue
        found.append(GivenTest(AssertTest(line), "docstring"))
    return found


def _last_def(text: str) -> str | None:
    """The last function ``text`` defines: ``name``, or ``Class.method`` when it is indented under a class."""
    matches = list(_DEF.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    indent = text[text.rfind("\n", 0, last.start()) + 1 : last.start()]
    if indent and not indent.strip():
        classes = [c for c in _CLASS.finditer(text, 0, last.start()) if len(c.group(1)) < len(indent)]
        if classes:
            return f"{classes[-1].group(2)}.{last.group(1)}"
    return last.group(1)


def _with_tests_shown(prompt: str, tests: list[GivenTest]) -> str:
    """The prompt, followed by the user's tests (the prompt's own examples are already in it)."""
    if not tests:
        return prompt
    lines = [_shown(t) for t in tests[:_SHOWN_TESTS]]
    more = f"\n(and {len(tests) - _SHOWN_TESTS} more)" if len(tests) > _SHOWN_TESTS else ""
    return f"{prompt.rstrip()}\n\nThe program must pass these tests:\n" + "\n".join(lines) + more


def _shown(test: GivenTest) -> str:
    if isinstance(test.test, StdioTest):
        return f"Input:\n{test.test.stdin.rstrip()}\nExpected output:\n{test.test.expected.rstrip()}\n"
    text = test.text
    return text if text.startswith(("assert", "def", "class")) else f"assert {text}"


def _problem_id(prompt: str, found: TestSet) -> str:
    payload = "\n".join([prompt, *(describe(t.test) for t in found.tests)])
    return "solve-" + hashlib.sha256(payload.encode()).hexdigest()[:10]
