from __future__ import annotations

import pytest

from refinelab.strategies import (
    Critique,
    RedraftCritique,
    extract_code,
    extract_confidence,
    parse_critique_json,
    parse_critique_xml,
)


def test_code_from_the_block_that_defines_the_entry_point() -> None:
    reply = (
        "Here is a helper:\n```python\ndef helper():\n    return 1\n```\nAnd the answer:\n"
        "```python\ndef solve(x):\n    return helper() + x\n```\nDone."
    )
    assert extract_code(reply, "solve").value == "def solve(x):\n    return helper() + x\n"
    assert extract_code(reply).value == "def solve(x):\n    return helper() + x\n"  # last python block


def test_code_without_fences_and_reasoning_dropped() -> None:
    reply = "<think>maybe ```python\nwrong()\n```</think>\ndef f():\n    return 2\n"
    assert extract_code(reply, "f").value == "def f():\n    return 2\n"
    assert extract_code("```\nprint(1)\n```").value == "print(1)\n"


def test_code_between_prose_lines_without_fences_or_in_an_unclosed_fence() -> None:
    prose = "Here is the function:\n\nimport math\n\ndef f(x):\n    return math.floor(x)\n\nIt runs in O(1). Done"
    assert extract_code(prose, "f").value == "import math\n\ndef f(x):\n    return math.floor(x)\n"
    unclosed = "Sure:\n```python\nfrom typing import List\n\ndef g(xs: List[int]) -> int:\n    return sum(xs)\n"
    assert (
        extract_code(unclosed, "g").value
        == "from typing import List\n\ndef g(xs: List[int]) -> int:\n    return sum(xs)\n"
    )
    two = "A helper:\n\ndef h():\n    return 1\n\nNow the answer.\n\ndef f():\n    return h()\n\nThat is all."
    assert extract_code(two, "f").value == "def f():\n    return h()\n"
    assert not extract_code("Write def f(x): return x in your editor, then run it.", "f").ok


def test_code_parse_failure_is_recorded_with_the_raw_text() -> None:
    parsed = extract_code("I cannot solve this, sorry.")
    assert not parsed.ok and parsed.value is None
    assert parsed.raw == "I cannot solve this, sorry." and "no code block" in (parsed.error or "")


def test_critic_json_plain_fenced_or_embedded() -> None:
    assert parse_critique_json('{"critique": "off by one", "passed": false}').value == Critique("off by one", False)
    assert parse_critique_json('Sure.\n```json\n{"critique": "", "passed": true}\n```').value == Critique("", True)
    embedded = 'My review: {"critique": "handles {braces} in \\"text\\"", "passed": false} -- end'
    assert parse_critique_json(embedded).value == Critique('handles {braces} in "text"', False)


@pytest.mark.parametrize("reply", ['{"critique": "x", "passed": "yes"}', "looks good to me", '{"passed": 1}'])
def test_critic_json_without_a_boolean_is_a_parse_failure(reply: str) -> None:
    parsed = parse_critique_json(reply)
    assert not parsed.ok and parsed.raw == reply


def test_critic_xml() -> None:
    reply = "<critique>The approach is wrong.</critique>\n<suggestion>Redraft</suggestion>"
    assert parse_critique_xml(reply).value == RedraftCritique("The approach is wrong.", "redraft")
    assert parse_critique_xml("<suggestion>pass</suggestion>").value == RedraftCritique("", "pass")
    assert not parse_critique_xml("<suggestion>rewrite</suggestion>").ok
    assert not parse_critique_xml("<critique>fine</critique>").ok


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Confidence: 0.8", 0.8),
        ("my confidence is 85%", 0.85),
        ('{"confidence": 0.25}', 0.25),
        ("Confidence = 90", 0.9),
    ],
)
def test_confidence(reply: str, value: float) -> None:
    assert extract_confidence(reply).value == pytest.approx(value)


def test_missing_or_impossible_confidence() -> None:
    assert not extract_confidence("no idea").ok
    assert not extract_confidence("confidence: 250%").ok
