"""Every Python snippet in the README and in docs/verification.md runs as written (imports present, no top-level ``await``), against
the fake OpenAI-compatible server refinelab ships (``refinelab.testing``) standing where the snippets'
``vllm:`` models are served by default: no network, no real model."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab.models import _resolve
from refinelab.testing import FakeOpenAI, serve

ROOT = Path(__file__).resolve().parents[1]
HUMANEVAL_0 = """```python
from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])
```"""


DOCUMENTS = ("README.md", "docs/verification.md")
"""The documents whose snippets are whole programs (docs/solve.md's names a server of its own)."""


def snippets() -> list[tuple[str, str]]:
    """``(file:line, code)`` of every ```` ```python ```` block of :data:`DOCUMENTS`."""
    found = []
    for name in DOCUMENTS:
        text = (ROOT / name).read_text(encoding="utf-8")
        for match in re.finditer(r"```python\n(.*?)```", text, re.S):
            found.append((f"{name}:{text[: match.start()].count(chr(10)) + 2}", match.group(1)))
    return found


HUMANEVAL_0_TESTS = """```python
assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False
assert has_close_elements([1.0, 2.8, 3.0], 0.3) == True
```"""


def reply(body: dict[str, object]) -> str:
    """A reviewer accepts; anyone else gets HumanEval/0 written correctly."""
    messages = body["messages"]
    assert isinstance(messages, list)
    if "senior code reviewer" in str(messages[0]["content"]):
        return json.dumps({"critique": "Correct.", "passed": True})
    if "unit tests" in str(messages[0]["content"]):
        return HUMANEVAL_0_TESTS
    return HUMANEVAL_0


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAI]:
    """The fake server where ``vllm:`` models are looked for; the snippets run in a fresh folder."""
    monkeypatch.chdir(tmp_path)
    with serve(reply) as fake:
        vllm = _resolve.PROVIDERS["vllm"]
        monkeypatch.setitem(_resolve.PROVIDERS, "vllm", _resolve.Provider(fake.base_url, vllm.key_variable, False))
        yield fake


def test_the_documents_have_python_snippets() -> None:
    assert {where.split(":")[0] for where, _ in snippets()} == set(DOCUMENTS)


@pytest.mark.parametrize(("where", "code"), snippets(), ids=[where for where, _ in snippets()])
def test_a_snippet_runs_as_written(
    where: str, code: str, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    compiled = compile(code, where, "exec")  # a top-level await is a SyntaxError here
    exec(compiled, {"__name__": "__main__"})
    assert server.answered(), "the snippet asked the model nothing"
    assert capsys.readouterr().out.strip()  # it shows what it got
