"""A run of the selecting strategies (``verified``, ``codet``) made through ``refinelab run`` against a
real OpenAI-compatible server on 127.0.0.1 answering from the request alone, the real sandbox scoring
every attempt, so the store holds generated tests and decisions of every kind worth showing.

The model writes four tests per problem ``p<i>`` (``f(x) = x + i``): two right, one wrong (``f(4) == 0``,
which the reference fails) and one that calls no entry point (rejected). The first draft of ``p0`` is
right; the others fail the visible test ``f(1)`` (but pass ``f(2)`` and ``f(7)``), so ``verified``
refines them: refining ``p1`` breaks it outright (the regression guard discards that), refining ``p2``
fixes it (kept).
"""

from __future__ import annotations

import json
from pathlib import Path

from refinelab.cli import main
from refinelab.store import Store
from refinelab.testing import serve
from tests.experiment.fakes import write_benchmark

STRATEGIES = ("verified(k=2, m=1, max_rounds=1)", "codet(n=2, m=1)")
N_PROBLEMS = 3


def program(body: str) -> str:
    """A fenced ``f``."""
    return f"```python\ndef f(x):\n    return {body}\n```"


def reply(request: dict[str, object]) -> str:
    """The scripted model (see the module docstring)."""
    messages = request["messages"]
    assert isinstance(messages, list)
    text = "\n".join(str(m["content"]) for m in messages)
    i = int(text.split("Problem p")[1].split(":")[0])
    if "You write unit tests" in str(messages[0]["content"]):
        return f"```python\nassert f(2) == {2 + i}\nassert f(7) == {7 + i}\nassert f(4) == 0\nassert g(1) == 1\n```"
    if "Previous program" in text or "Latest attempt" in text:  # a refinement
        return program("0" if i == 1 else f"x + {i}")
    return program(f"x + {i}" if i == 0 else f"x + {i} if x > 1 else 0")


def write_problems(path: Path) -> Path:
    """The runner tests' problems, each with a reference solution (so generated tests are judged)."""
    write_benchmark(path, N_PROBLEMS)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for i, line in enumerate(lines):
        line["reference"] = f"def f(x):\n    return x + {i}\n"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def make_selecting_run(folder: Path) -> tuple[Path, str]:
    """Run both selecting strategies into ``folder/store.sqlite``; (store, run id)."""
    data, store = write_problems(folder / "problems.jsonl"), folder / "store.sqlite"
    command = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--store", str(store)]
    command += ["--cache", str(folder / "responses.sqlite"), "--quiet"]
    with serve(reply) as server:
        for strategy in STRATEGIES:
            command += ["--strategy", strategy]
        assert main([*command, "--base-url", server.base_url], {}) == 0
    with Store(store) as opened:
        return store, opened.run().id
