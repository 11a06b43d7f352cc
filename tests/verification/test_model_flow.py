"""The whole loop against a real OpenAI-compatible server on 127.0.0.1: request tests, read the messy
replies, pool them, run programs on them in the sandbox, choose by agreement."""

from __future__ import annotations

import asyncio
import itertools

from refinelab.models import GenerateConfig, open_model
from refinelab.problems import AssertTest, Problem
from refinelab.sandbox import WorkerPool
from refinelab.testing import serve
from refinelab.verification import dual_agreement, parse_tests, pooled, run_matrix, test_request

PROBLEM = Problem(
    "T/abs", 'def absolute(x: int) -> int:\n    """Return |x|."""\n', "function", (), (), entry_point="absolute"
)
REPLIES = [
    "Here you go:\n```python\ndef check(candidate):\n    assert candidate(-3) == 3\n    assert candidate(4) == 4\n```\n",
    "assert absolute(-3) == 3\nassert absolute(0) == 0\nThese cover the sign.\nassert absolute(-7",
    "```python\nassert absolute(-1) == -1  # a wrong test\nassert absolute(5) == 5\n```",
]
PROGRAMS = [
    "def absolute(x):\n    return x\n",
    "def absolute(x):\n    return abs(x)\n",
    "def absolute(x):\n    return -x if x < 0 else x\n",
]


def test_generated_tests_through_a_real_server_choose_the_right_program() -> None:
    replies = itertools.cycle(REPLIES)
    with serve(lambda request: next(replies)) as server:
        model = open_model("vllm:test-model", {}, base_url=server.base_url)

        async def main() -> list[str]:
            async with model:
                done = [
                    await model.generate(test_request(PROBLEM, count=4), GenerateConfig(temperature=0.8))
                    for _ in REPLIES
                ]
            return [completion.text for completion in done]

        texts = asyncio.run(main())
        bodies = server.answered()
    expected = [{"role": m.role, "content": m.content} for m in test_request(PROBLEM, count=4)]
    assert [body["messages"] for body in bodies] == [expected] * 3
    assert texts == REPLIES

    batches = [parse_tests(text, PROBLEM) for text in texts]
    assert [len(b.tests) for b in batches] == [2, 2, 2]
    assert [r.reason for r in batches[1].rejected] == ["does not parse (truncated?)"]
    tests = pooled([b.tests for b in batches])
    assert [t.code for t in tests if isinstance(t, AssertTest)] == [
        "assert absolute(-3) == 3",
        "assert absolute(4) == 4",
        "assert absolute(0) == 0",
        "assert absolute(-1) == -1",
        "assert absolute(5) == 5",
    ]

    async def agree() -> list[frozenset[int]]:
        async with WorkerPool(workers=2) as pool:
            return await run_matrix(pool, PROGRAMS, tests, PROBLEM)

    passed = asyncio.run(agree())
    assert passed == [frozenset({1, 2, 3, 4}), frozenset({0, 1, 2, 4}), frozenset({0, 1, 2, 4})]
    assert dual_agreement(passed).chosen == 1
