"""A run made the way a user makes one: `run_experiment` against a real OpenAI-compatible server on
127.0.0.1 answering with real programs, the real sandbox scoring every attempt, prices known.

The "models" answer from the request alone. The actor (``qwen-32b``) writes the Sanitize Hands
program correctly at first (LiveCodeBench abc357_a, as in the Borges & Rios case study); the small
critic (``qwen-7b``) calls its early ``break`` a bug, the actor removes it, and the small critic then
accepts the broken program: a regression error. The same-size critic accepts the correct program.
Three more problems give an improvement, a false acceptance and problems of each difficulty.
The statements here are short paraphrases written for this test, with tests made up for it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from refinelab.experiment import SAME, BenchmarkChoice, ExperimentSpec, run_experiment
from refinelab.models import load_models_config
from refinelab.runtime import Settings
from refinelab.strategies import StrategySpec
from refinelab.testing import serve
from tests.strategies.test_critics import HANDS_BROKEN
from tests.strategies.test_execution import HANDS_CORRECT

ACTOR, SMALL_CRITIC = "qwen-32b", "qwen-7b"
HALLUCINATED = "All aliens must be considered; the early break is a bug."
STRATEGIES = ("single-pass", "self-refine(max_iters=2)", "exec-refine(max_iters=2)", "sampling(n=2)")


def _fenced(code: str) -> str:
    return f"```python\n{code}```"


# tag -> (difficulty, statement, first draft, refined program, tests as (stdin, stdout))
PROBLEMS = {
    "abc357_a": (
        "easy",
        "[hands] A bottle of disinfectant can clean exactly M hands. N aliens come one after another; alien i "
        "has H_i hands and wants to clean all of them. An alien who cannot clean all their hands uses up what "
        "is left. How many aliens clean all their hands? Input: N M, then H_1 ... H_N.",
        HANDS_CORRECT,
        HANDS_BROKEN,
        [("5 10\n2 3 2 5 3\n", "3\n"), ("5 10\n2 3 2 3 5\n", "4\n"), ("1 5\n1\n", "1\n"), ("4 10\n8 3 1 1\n", "1\n")],
    ),
    "sum_pair": (
        "medium",
        "[pair] Read two integers a and b on one line and print their sum.",
        _fenced("a, b = map(int, input().split())\nprint(a - b)\n"),
        _fenced("a, b = map(int, input().split())\nprint(a + b)\n"),
        [("1 2\n", "3\n"), ("10 -4\n", "6\n"), ("0 0\n", "0\n")],
    ),
    "max_run": (
        "hard",
        "[run] Read a line of integers and print the length of the longest strictly increasing run.",
        _fenced("xs = list(map(int, input().split()))\nprint(len(xs))\n"),
        _fenced(
            "xs = list(map(int, input().split()))\nbest = cur = 1\nfor a, b in zip(xs, xs[1:]):\n"
            "    cur = cur + 1 if b > a else 1\n    best = max(best, cur)\nprint(best)\n"
        ),
        [("1 2 3\n", "3\n"), ("3 2 1\n", "1\n"), ("1 3 2 4 5 6\n", "4\n")],
    ),
    "echo_twice": (
        "medium",
        "[twice] Read a word and print it twice, separated by a space.",
        _fenced("w = input()\nprint(w, w)\n"),
        _fenced("w = input()\nprint(w, w)\n"),
        [("hi\n", "hi hi\n"), ("a\n", "a a\n")],
    ),
}
TAGS = {"[hands]": "abc357_a", "[pair]": "sum_pair", "[run]": "max_run", "[twice]": "echo_twice"}


def write_problems(path: Path) -> Path:
    """The four problems in LiveCodeBench's format: the first two tests public, all of them private."""
    lines = []
    for question_id, (difficulty, statement, _, _, tests) in PROBLEMS.items():
        cases = [{"input": i, "output": o, "testtype": "stdin"} for i, o in tests]
        lines.append({"question_id": question_id, "question_content": statement, "difficulty": difficulty,
                      "platform": "atcoder", "public_tests": cases[:2], "private_tests": cases})  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _problem(text: str) -> str:
    if "disinfect" in text:  # the paraphrase above, or the real abc357_a statement
        return "abc357_a"
    return next(question for tag, question in TAGS.items() if tag in text)


def reply(body: dict[str, object]) -> str:
    """The scripted actor and critics (see the module docstring)."""
    messages = body["messages"]
    assert isinstance(messages, list)
    system, text = str(messages[0]["content"]), "\n".join(str(m["content"]) for m in messages)
    question = _problem(text)
    _, _, draft, refined, _ = PROBLEMS[question]
    if "senior code reviewer" in system:
        return _critique(str(body["model"]), question, str(messages[-1]["content"]))
    refining = "flagged" in system or "did not pass" in system
    return refined if refining else draft


def _critique(model: str, question: str, program: str) -> str:
    if question == "abc357_a" and model == SMALL_CRITIC and "break" in program:
        return json.dumps({"critique": HALLUCINATED, "passed": False})
    wrong = {"sum_pair": "a - b", "max_run": "print(len(xs))"}.get(question)
    if wrong is not None and wrong in program and not (question == "sum_pair" and model == ACTOR):
        return json.dumps({"critique": "The output is not what the statement asks for.", "passed": False})
    return json.dumps({"critique": "", "passed": True})  # the same-size critic lets a - b through


MODELS_FILE = """
[models.endpoints."qwen-32b"]
price = { input = 0.20, output = 0.60 }

[models.endpoints."qwen-7b"]
price = { input = 0.05, output = 0.15 }
"""


def make_run(folder: Path, data: Path | None = None, strategies: tuple[str, ...] = STRATEGIES) -> tuple[Path, str]:
    """Run the demo experiment into ``folder/store.sqlite`` on the problems above (or on ``data``, a
    LiveCodeBench file); (store, run id)."""
    data = data or write_problems(folder / "livecodebench.jsonl")
    models = folder / "models.toml"
    models.write_text(MODELS_FILE, encoding="utf-8")
    settings = Settings(store=folder / "store.sqlite", cache=folder / "responses.sqlite")
    with serve(reply) as server:
        spec = ExperimentSpec(
            (BenchmarkChoice("livecodebench", str(data)),),
            tuple(StrategySpec.parse(s) for s in strategies),
            (ACTOR,),
            (SAME, SMALL_CRITIC),
            name="demo",
            base_url=server.base_url,
            concurrency=4,
            models=load_models_config(models),
        )
        summary = asyncio.run(run_experiment(spec, settings))
    assert summary.progress.failed == 0
    return settings.store, summary.run_id
