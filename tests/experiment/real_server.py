"""A local OpenAI-compatible server that answers with real programs and real generated tests, and a
``refinelab run`` through it: the end-to-end check of ``verified`` and ``codet`` (issue 11).

Programs: the real HumanEval programs of ``tests.verification.realdata`` (six models' single-pass
programs and Reflexion's gpt-3.5 rounds, 7-16 per task), each task's list shuffled with a seed. Tests:
the asserts gpt-3.5 wrote for itself in those Reflexion runs. The server answers

- a test-writing request (the :func:`refinelab.verification.test_request` messages): the task's asserts;
- a refinement request (the refinement system prompt): the task's next program not handed out as a
  draft (programs ``width``, ``width + 1``, ... in order, cycling);
- any other (a draft): the ``i``-th identical request gets program ``i`` (cycling), so sample ``i`` of a
  request is program ``i`` and a temperature-0 single pass gets program 0, a random pick.

No answer depends on whether a program is right: the server never runs anything.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refinelab.check import read_any_samples
from refinelab.cli import main
from refinelab.problems import Problem, load_humaneval
from refinelab.strategies import DEFAULT_PROMPTS
from refinelab.testing import FakeOpenAI, serve
from refinelab.verification import test_request
from tests.verification.realdata import sample_rows, test_rows, write_jsonl

TEST_SYSTEM = test_request(Problem("x", "def f():\n    pass\n", "function", (), (), entry_point="f"))[0].content


@dataclass
class RealAnswers:
    """The server's reply writer; see the module docstring. ``seen`` counts requests by kind, ``replies``
    holds every reply written."""

    problems: list[Problem]
    programs: dict[str, list[str]]
    tests: dict[str, list[str]]
    width: int
    seen: Counter[str] = field(default_factory=Counter)
    replies: list[str] = field(default_factory=list)
    _identical: Counter[str] = field(default_factory=Counter)
    _refined: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, object]) -> str:
        reply = self._answer(request)
        with self._lock:
            self.replies.append(reply)
        return reply

    def _answer(self, request: dict[str, object]) -> str:
        messages = request["messages"]
        assert isinstance(messages, list)
        task = self.task_of("\n".join(str(m["content"]) for m in messages))
        system = str(messages[0]["content"])
        with self._lock:
            if system == TEST_SYSTEM:
                self.seen["tests"] += 1
                return "```python\n" + "\n".join(self.tests.get(task, [])) + "\n```\n"
            if system == DEFAULT_PROMPTS.refine_system:
                self.seen["refine"] += 1
                index = self.width + self._refined[task]
                self._refined[task] += 1
            else:
                self.seen["draft"] += 1
                key = json.dumps(request, sort_keys=True)
                index = self._identical[key]
                self._identical[key] += 1
        pool = self.programs[task]
        return "```python\n" + pool[index % len(pool)].rstrip() + "\n```\n"

    def task_of(self, text: str) -> str:
        """The task whose prompt the request quotes (the longest, should one prompt hold another)."""
        quoted = [p for p in self.problems if p.prompt.strip() in text]
        assert quoted, "a request that quotes no HumanEval prompt"
        return max(quoted, key=lambda p: len(p.prompt)).id


def real_answers(shared: Path, tasks: list[str], *, width: int, seed: int = 1) -> RealAnswers:
    """The answers for ``tasks`` from the shared data."""
    problems = [p for p in load_humaneval() if p.id in tasks]
    with tempfile.TemporaryDirectory() as folder:
        rows = [row for row in sample_rows(shared, seed=seed) if row["task_id"] in tasks]
        path = write_jsonl(Path(folder) / "samples.jsonl", rows)
        samples, _ = read_any_samples(path, problems)
    programs: dict[str, list[str]] = {}
    for sample in samples:
        programs.setdefault(sample.problem.id, []).append(sample.program)
    tests = {str(row["task_id"]): list(row["tests"]) for row in test_rows(shared)}  # type: ignore[call-overload]
    return RealAnswers(problems, programs, tests, width)


@dataclass(frozen=True)
class Outcome:
    """What a run through the server produced."""

    report: dict[str, Any]
    """``refinelab report --format json``."""
    server_calls: Counter[str]
    """Requests the server answered, by kind (``draft``, ``refine``, ``tests``)."""
    stored_calls: Counter[str]
    """Model calls the store records as sent (not answered from the cache), by role."""
    answered: int
    """Requests the server answered normally."""
    server_replies: Counter[str]
    """Every reply the server wrote."""
    stored_replies: Counter[str]
    """Every reply the store records as sent: actor responses, critic and test-writing raw replies."""
    requests: tuple[dict[str, object], ...] = ()
    """Every request body the server answered, in order."""


SPEC = """name = "verified-e2e"
actors = ["vllm:real-programs"]
strategies = {strategies}
concurrency = 1

[[benchmarks]]
name = "humaneval"
problems = {tasks}

[models.endpoints."vllm:real-programs"]
concurrency = 1
"""


def run_through_server(answers: RealAnswers, strategies: list[str], folder: Path) -> Outcome:
    """``refinelab run`` with ``strategies`` on the answers' tasks against a local server, then the report."""
    spec = folder / "spec.toml"
    tasks = [p.id for p in answers.problems]
    spec.write_text(SPEC.format(strategies=json.dumps(strategies), tasks=json.dumps(tasks)))
    store, out = folder / "store.sqlite", folder / "report.json"
    with serve(answers) as server:
        code = main(["run", str(spec), "--store", str(store), "--base-url", server.base_url, "--quiet"], {})
        assert code == 0, f"refinelab run exited {code}"
        requests = tuple(server.answered())
        assert isinstance(server, FakeOpenAI)
    assert main(["report", "--store", str(store), "--format", "json", "--out", str(out)], {}) == 0
    report = json.loads(out.read_text())
    sent = stored_replies(store)
    seen, replies = Counter(answers.seen), Counter(answers.replies)
    return Outcome(report, seen, stored_calls(store), len(requests), replies, sent, requests)


def stored_calls(store: Path) -> Counter[str]:
    """Calls per role in the store's ``model_calls`` view that went to the server (not cache hits)."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT role, count(*) FROM model_calls WHERE NOT cached GROUP BY role").fetchall()
    return Counter({str(role): int(count) for role, count in rows})


def stored_replies(store: Path) -> Counter[str]:
    """The replies the store records for calls that went to the server (not cache hits)."""
    queries = [
        "SELECT response FROM attempts WHERE NOT cached",
        "SELECT raw FROM critic_outputs WHERE NOT cached",
        "SELECT raw FROM test_generations WHERE NOT cached",
    ]
    with sqlite3.connect(store) as db:
        return Counter(str(row[0]) for query in queries for row in db.execute(query))
