"""Every Python snippet in the README runs as written (imports present, no top-level ``await``), against
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


def snippets() -> list[tuple[int, str]]:
    """``(line, code)`` of every ```` ```python ```` block of the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


def reply(body: dict[str, object]) -> str:
    """A reviewer accepts; anyone else gets HumanEval/0 written correctly."""
    messages = body["messages"]
    assert isinstance(messages, list)
    if "senior code reviewer" in str(messages[0]["content"]):
        return json.dumps({"critique": "Correct.", "passed": True})
    return HUMANEVAL_0


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAI]:
    """The fake server where ``vllm:`` models are looked for; the snippets run in a fresh folder."""
    monkeypatch.chdir(tmp_path)
    with serve(reply) as fake:
        vllm = _resolve.PROVIDERS["vllm"]
        monkeypatch.setitem(_resolve.PROVIDERS, "vllm", _resolve.Provider(fake.base_url, vllm.key_variable, False))
        yield fake


def test_the_readme_has_python_snippets() -> None:
    assert len(snippets()) >= 2


@pytest.mark.parametrize(("line", "code"), snippets(), ids=[f"README.md:{line}" for line, _ in snippets()])
def test_a_readme_snippet_runs_as_written(
    line: int, code: str, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    compiled = compile(code, f"README.md:{line}", "exec")  # a top-level await is a SyntaxError here
    exec(compiled, {"__name__": "__main__"})
    assert server.answered(), "the snippet asked the model nothing"
    assert capsys.readouterr().out.strip()  # it shows what it got
