"""``refinelab recall-draft``: a judge model on (old, new) program pairs of a stored Self-Redraft run,
everything over real HTTP on 127.0.0.1; and the library pieces with a FunctionModel."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import DraftPair, draft_pairs, judge_drafts, read_judgement
from refinelab.models import GenerateConfig, Message
from refinelab.store import RunHeader, Store
from refinelab.testing import FunctionModel, serve
from tests.experiment.fakes import write_benchmark


def program(i: int, version: int, *, new_approach: bool = False) -> str:
    note = "  # new approach" if new_approach else ""
    return f"```python\ndef f(x):  # v{version}{note}\n    return x + {i}\n```"


def answer(body: dict[str, object]) -> str:
    """Critic: redraft v0, refine v1, pass v2. Actor: v0, then v1 (a new approach on even problems), then
    v2. Judge: yes when the second program says it is a new approach."""
    messages = body["messages"]
    assert isinstance(messages, list)
    system, text = str(messages[0]["content"]), "\n".join(str(m["content"]) for m in messages)
    if system.startswith("You compare two programs"):
        second = text.split("Second program:")[1]
        return "<changed>yes</changed>" if "new approach" in second else "Same idea. <changed>no</changed>"
    i = int(re.search(r"Problem p(\d+)", text).group(1))  # type: ignore[union-attr]
    if "senior code reviewer" in system:
        latest = text.rsplit("```python", 1)[1]
        verdict = "redraft" if "# v0" in latest else "refine" if "# v1" in latest else "pass"
        return f"<critique>look again</critique><suggestion>{verdict}</suggestion>"
    latest = text.rsplit("Latest attempt:", 1)[-1]
    if "# v1" in latest:
        return program(i, 2)
    if "# v0" in latest:
        return program(i, 1, new_approach=i % 2 == 0)
    return program(i, 0)


def test_recall_on_draft_is_judged_per_configuration_over_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = write_benchmark(tmp_path / "p.jsonl"), tmp_path / "s.sqlite"
    with serve(answer) as server:
        run = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--base-url", server.base_url]
        assert main([*run, "--strategy", "self-redraft(max_iters=3)", "--store", str(store), "--quiet"], {}) == 0
        before = len(server.answered())
        judge = ["recall-draft", "--judge", "judge", "--base-url", server.base_url, "--store", str(store)]
        assert main([*judge, "--with-refine"], {}) == 0
        judged = server.answered()[before:]
    out = capsys.readouterr().out
    assert "12 pairs judged" in out  # six problems: one redraft and one refine pair each
    assert "50.0% (3/6)" in out  # recall on draft: the even problems' redrafts changed the approach
    assert "0.0% (0/6)" in out  # after refine, nothing changed
    assert len(judged) == 12
    for body in judged:  # the judge saw the two programs and nothing else: no problem statement, no critique
        content = "\n".join(str(m["content"]) for m in body["messages"])
        assert "Problem p" not in content and "look again" not in content and content.count("def f(x)") == 2


def test_a_missing_store_is_a_one_line_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recall-draft", "--judge", "x", "--store", str(tmp_path / "none.sqlite")], {}) == 2
    assert "none.sqlite: no store here" in capsys.readouterr().err


def test_unreadable_answers_are_counted_apart_never_guessed() -> None:
    assert read_judgement("<changed> Yes </changed>") is True
    assert read_judgement("format: <changed>yes</changed> ... <changed>no</changed>") is False
    assert read_judgement("I think it changed.") is None

    def judge(messages: Sequence[Message], config: GenerateConfig) -> str:
        return "maybe" if "return 0" in messages[1].content else "<changed>no</changed>"

    pairs = [DraftPair("c", "p", 0, 0, "redraft", "def f(): return 1", new) for new in ("def f(): return 0", "x = 1")]
    judgements = asyncio.run(judge_drafts(FunctionModel(judge), pairs))
    assert [j.changed for j in judgements] == [None, False]


def test_pairs_need_a_critic_suggestion_and_two_readable_programs(tmp_path: Path) -> None:
    with Store(tmp_path / "empty.sqlite") as store:
        store.open_run("r1", {"name": "x"}, RunHeader(versions={}, isolation="none", limits={}))
        assert draft_pairs(store, "r1") == []
