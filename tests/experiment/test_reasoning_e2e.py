"""``refinelab`` against a server that behaves as OpenAI's reasoning models do (refusing what they refuse, with
their error bodies, counting thinking in ``completion_tokens_details.reasoning_tokens``), through the real
command line: ``ping``, then ``run`` with single pass, Self-Refine and sampling at two efforts, ``export`` and
``report``; no request is refused, every exported attempt carries its effort and the server's reasoning tokens,
cost is known, and a higher effort that breaks what a lower one solved is counted as overthinking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from refinelab.cli import main
from refinelab.testing import OPENAI_REASONING, serve
from tests.experiment.fakes import reply, write_benchmark

KEY = {"OPENAI_API_KEY": "sk-test"}
STRATEGIES = ["single-pass", "self-refine", "sampling"]
WRONG_P2 = "```python\ndef f(x):\n    return x + 2 if x < 5 else 0\n```"


def overthinker(request: dict[str, object]) -> str:
    """The runner's deterministic model, except that at high effort its first draft of p2 is wrong."""
    messages = request["messages"]
    assert isinstance(messages, list)
    text = "\n".join(str(m["content"]) for m in messages)
    drafting = "reviewer" not in str(messages[0]["content"]).lower() and "Previous program" not in text
    if request.get("reasoning_effort") == "high" and drafting and "Problem p2" in text:
        return WRONG_P2
    return reply(request)


def run_args(data: Path, store: Path, url: str) -> list[str]:
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "openai:o4-mini", "--base-url", url]
    for strategy in STRATEGIES:
        args += ["--strategy", strategy]
    return [*args, "--reasoning-effort", "low", "--reasoning-effort", "high", "--store", str(store)]


def exported(store: Path, out: Path) -> list[dict[str, Any]]:
    assert main(["export", "--store", str(store), "--out", str(out)], {}) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.fixture(scope="module")
def done(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run through the fake reasoning server (and a second, resumed one), what it exported and reported."""
    folder = tmp_path_factory.mktemp("reasoning")
    data, store = write_benchmark(folder / "problems.jsonl", n=4), folder / "store.sqlite"
    with serve(overthinker, mimic=OPENAI_REASONING) as server:
        pinged = main(["ping", "openai:o4-mini", "--base-url", server.base_url], KEY)
        code = main(run_args(data, store, server.base_url), KEY)
        asked = len(server.log)
        again = main(run_args(data, store, server.base_url), KEY)  # a resume: everything is stored already
        log, answered, refused = list(server.log), server.answered(), server.refused()
    report = folder / "report.json"
    assert main(["report", "--store", str(store), "--format", "json", "--out", str(report)], {}) == 0
    text = folder / "report.txt"
    assert main(["report", "--store", str(store), "--out", str(text)], {}) == 0
    return {
        "codes": (pinged, code, again), "asked": asked, "log": log, "answered": answered, "refused": refused,
        "rows": exported(store, folder / "export.jsonl"), "report": json.loads(report.read_text()),
        "text": text.read_text(), "store": store,
    }  # fmt: skip


def test_ping_run_and_resume_exit_0_and_no_request_is_refused(done: dict[str, Any]) -> None:
    assert done["codes"] == (0, 0, 0)
    assert done["refused"] == [] and len(done["log"]) == done["asked"]  # the resume asked for nothing
    for body in done["answered"][1:]:  # the run's requests (the first is the ping's)
        assert body["reasoning_effort"] in ("low", "high")
        assert not {"max_tokens", "temperature", "top_p", "stop", "n"} & set(body)  # samples: one request each


def test_every_exported_attempt_carries_its_effort_and_the_servers_reasoning_tokens(done: dict[str, Any]) -> None:
    rows, bodies = done["rows"], done["answered"][1:]
    assert {r["strategy"] for r in rows} == set(STRATEGIES) and len({r["config"] for r in rows}) == 6
    per_effort: dict[str, set[int]] = {}
    for body in bodies:
        per_effort.setdefault(body["reasoning_effort"], set()).add(OPENAI_REASONING.thought(body))
    for row in rows:
        assert row["reasoning_effort"] in ("low", "high")
        assert row["reasoning_tokens"] in per_effort[row["reasoning_effort"]]
        assert row["cost_usd"] is not None
        if row["critic_raw_reply"] is not None:
            assert row["critic_reasoning_effort"] == row["reasoning_effort"]
            assert row["critic_reasoning_tokens"] in per_effort[row["reasoning_effort"]]
            assert row["critic_cost_usd"] is not None
    # attempts answered by a request (not from the cache: single pass and Self-Refine share their first draft)
    actor = sum(r["reasoning_tokens"] for r in rows if not r["cached"])
    critic = sum(
        r["critic_reasoning_tokens"] for r in rows if r["critic_raw_reply"] is not None and not r["critic_cached"]
    )
    assert actor + critic == sum(int(b.get("n", 1)) * OPENAI_REASONING.thought(b) for b in bodies)  # the server's


def test_the_temperature_a_strategy_asked_for_is_recorded_as_not_sent(done: dict[str, Any]) -> None:
    for row in done["rows"]:
        settings = {item["setting"]: item for item in row["not_sent"]}
        assert "temperature" in settings and "samples only at temperature 1" in settings["temperature"]["reason"]
    assert "Settings asked for but not sent" in done["text"] and "temperature=0.0" in done["text"]


def test_the_report_puts_tokens_against_pass_and_counts_overthinking(done: dict[str, Any]) -> None:
    efforts = done["report"]["efforts"]
    assert len(efforts["points"]) == 6 and any(p["frontier"] for p in efforts["points"])
    for point in efforts["points"]:
        assert point["thinking"] > 0 and point["tokens"]["low"] <= point["tokens"]["value"] <= point["tokens"]["high"]
    by_strategy = {c["lower"].split(" ")[0]: c for c in efforts["comparisons"]}
    assert set(by_strategy) == set(STRATEGIES)
    assert by_strategy["single-pass"]["overthinking"] == [["jsonl/p2", 0]]
    assert by_strategy["self-refine"]["overthinking"] == []  # the critic caught the broken draft and it was fixed
    assert by_strategy["sampling"]["overthinking"] == [["jsonl/p2", 0]]  # every high-effort sample of p2 is wrong
    assert by_strategy["single-pass"]["lower_effort"] == "low" and by_strategy["single-pass"]["higher_effort"] == "high"
    assert "Effort levels of one strategy" in done["text"] and "1: jsonl/p2" in done["text"]
    labels = [row["label"] for row in done["report"]["configurations"]]
    assert "single-pass · openai:o4-mini · effort high" in labels
    assert all(row["reasoning_tokens"] > 0 for row in done["report"]["configurations"])


def test_the_viewer_lists_overthinking_cases_and_shows_each_attempts_effort_and_thinking(done: dict[str, Any]) -> None:
    from refinelab.store import Store
    from refinelab.view import Source
    from refinelab.view._payload import slug
    from tests.view.test_site import data_file

    with Store(done["store"]) as store:
        run = store.run()
        highs = {c.strategy: c for c in store.configurations(run.id) if c.effort == "high"}
    high = highs["single-pass"]
    source = Source(done["store"])
    found = source.get(f"data/{slug(run.id)}/run.js")
    assert found is not None
    payload = data_file(found[1].decode())
    # every high-effort draft of p2 is wrong: single pass and sampling lose it; Self-Refine's critic has it fixed
    assert payload["efforts"] and payload["overthinking"] == [
        [highs[s].key, "jsonl/p2", 0] for s in ("single-pass", "sampling")
    ]
    summary = next(t for t in payload["trajectories"] if t["config"] == high.key and t["problem"] == "jsonl/p2")
    assert not summary["passed"] and summary["reasoning_tokens"] > 0
    problem = source.get(f"data/{slug(run.id)}/p/{slug('jsonl/p2')}.js")
    assert problem is not None
    trajectories = data_file(problem[1].decode())["trajectories"]
    attempt = next(t for t in trajectories if t["config"] == high.key)["attempts"][0]
    assert attempt["reasoning_tokens"] > 0 and attempt["reasoning"] is None  # OpenAI does not return the thinking
    assert [n["setting"] for n in attempt["not_sent"]] == ["temperature"]
