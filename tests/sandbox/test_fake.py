"""The fake sandbox judges as the real one does: the same programs give the same outcomes in a
:class:`FakeSandbox` and in a :class:`WorkerPool` (entry points by class, values rebuilt from exact
builtins, exits, errors)."""

from __future__ import annotations

import asyncio

from refinelab.problems import AssertTest, CallTest, StdioTest
from refinelab.sandbox import FakeSandbox, Item, RunResult, Suite
from tests.conftest import with_pool

LIAR = "class Liar(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
CASES: list[Item] = [
    ("def g():\n    return 1\n", Suite.of([CallTest("f()", 1)], entry_point="Solution.f")),  # no such class
    (
        "class Solution:\n    def f(self):\n        return 1\n",
        Suite.of([CallTest("candidate()", 1)], entry_point="Solution.f"),
    ),
    (
        "class Solution:\n    def g(self):\n        return 1\n",
        Suite.of([CallTest("candidate()", 1)], entry_point="Solution.f"),
    ),
    ("x = 1\n", Suite.of([CallTest("f()", 1)], entry_point="f")),  # no such function
    # a subclass that lies about equality is judged as the plain value it stands for
    (
        LIAR + "def f():\n    return Liar(3)\n",
        Suite.of([CallTest("f()", 4), AssertTest("assert f() == 4")], entry_point="f"),
    ),
    (
        "class L(list):\n    pass\ndef f():\n    return L([1, 2])\n",
        Suite.of([AssertTest("assert type(f()) is list")], entry_point="f"),
    ),
    ("def f():\n    return (1, 2)\n", Suite.of([CallTest("f()", [1, 2]), CallTest("f()", (1, 2))], entry_point="f")),
    ("def f():\n    raise SystemExit(3)\n", Suite.of([CallTest("f()", 1)], entry_point="f")),
    ("def f(:\n", Suite.of([CallTest("f()", 1)], entry_point="f")),
    ("print('a')\nraise ValueError('x')\n", Suite.of([StdioTest("", "a\n")], kind="stdio")),
    ("import sys\nprint(1)\nsys.exit(0)\n", Suite.of([StdioTest("", "1\n")], kind="stdio")),
    ("import sys\nsys.exit(2)\n", Suite.of([StdioTest("", "")], kind="stdio")),
]


def judged(result: RunResult) -> list[tuple[object, ...]]:
    return [(o.verdict, o.error_type, o.message, o.expected, o.actual) for o in result.outcomes]


def test_the_fake_sandbox_gives_the_outcomes_the_worker_pool_gives() -> None:
    real = with_pool(lambda pool: pool.run_items(CASES), workers=1)
    fake = asyncio.run(FakeSandbox().run_items(CASES))
    assert [judged(r) for r in fake] == [judged(r) for r in real]
    assert [r.passed for r in real] == [False, True, False, False, False, True, False, False, False, False, True, False]
