"""Real HumanEval programs from ../shared/data as sample files (human-eval/evalplus format), for the
speed benches. No program here was written by us; most are wrong.

Sources (all under ``llm-outputs/``): the single-pass files of six models (Reflexion's GPT-4,
gpt-3.5-turbo and text-davinci-003 completions, 164 each, some empty: the model gave no code;
LLMDebugger's CodeLlama, StarCoder and gpt-3.5-turbo-0613 whole programs, 164 each) and every
implementation of Reflexion's 10-round gpt-3.5 runs (407). That is 1,391 programs, 1,165 distinct.

Two sets:

- ``distinct``: every distinct (task, program) once, in source order (1,165 programs, 5-16 a task).
- ``ten``: ten per task (1,640, like a 10-sample run): each task's programs in source order, repeated
  from its first when it has fewer than ten. Repeats are real (samples at temperature > 0 repeat
  themselves often; CodeT's 100 CodeGen samples per task hold many identical ones), but they favour a
  harness that scores an identical program once: compare on ``distinct`` too.
- ``hundred``: 100 per task (16,400, the shape of a pass@100 run): ``ten``'s ten, then nine more rounds of
  them, each program with a comment line of its own appended (``# variant N``), so that every one is a
  distinct program that runs (and behaves as its real original does).

    python bench/real_samples.py OUT.jsonl [--set ten|distinct|hundred] [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
from pathlib import Path

COMPLETIONS = ("gpt-4", "gpt-3.5-turbo", "text-davinci-003")
"""Reflexion's single-pass files hold function bodies (completions appended to the prompt)."""
PROGRAMS = ("codellama", "starcoder", "gpt-3.5-turbo-0613")
"""LLMDebugger's files hold whole programs."""
REFLEXION = "refinement-trajectories/humaneval-chatgpt-reflexion-10.jsonl.gz"
DEFAULT_SHARED = Path(
    os.environ.get("REFINELAB_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
"""``../shared/data`` beside the checkout, or ``$REFINELAB_SHARED_DATA``."""


def _records(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _key(task_id: str) -> int:
    return int(task_id.split("/")[1])


def by_task(shared: Path) -> dict[str, list[dict[str, str]]]:
    """Every program as a samples-file row, per task, in source order (duplicates kept)."""
    outputs = shared / "llm-outputs"
    found: dict[str, list[dict[str, str]]] = {}
    for model in COMPLETIONS + PROGRAMS:
        field = "completion" if model in COMPLETIONS else "solution"
        for record in _records(outputs / "single-pass" / f"humaneval-{model}.jsonl.gz"):
            task = str(record["task_id"])
            found.setdefault(task, []).append({"task_id": task, field: str(record["solution"])})
    prompts: dict[str, str] = {}
    for record in _records(outputs / REFLEXION):
        task = str(record["task_id"])
        prompts[task] = str(record["prompt"])
        for code in record["implementations"]:  # type: ignore[attr-defined]
            # A whole function: a program of its own (the prompt's imports kept in front of it).
            imports = "".join(line + "\n" for line in prompts[task].splitlines() if line.startswith(("import", "from")))
            found.setdefault(task, []).append({"task_id": task, "solution": imports + str(code)})
    return {task: found[task] for task in sorted(found, key=_key)}


def rows(shared: Path, which: str) -> list[dict[str, str]]:
    """The rows of the ``distinct``, ``ten`` or ``hundred`` set (see the module docstring)."""
    chosen: list[dict[str, str]] = []
    for programs in by_task(shared).values():
        seen: set[str] = set()
        distinct = []
        for row in programs:
            text = json.dumps(row, sort_keys=True)
            if text not in seen:
                seen.add(text)
                distinct.append(row)
        if which == "distinct":
            chosen += distinct
            continue
        ten = [programs[i % len(programs)] for i in range(10)]
        chosen += ten if which == "ten" else [_variant(row, n) for n in range(10) for row in ten]
    return chosen


def _variant(row: dict[str, str], number: int) -> dict[str, str]:
    """``row`` with ``# variant NUMBER`` appended to its program (number 0: the row as it is)."""
    if not number:
        return row
    field = "completion" if "completion" in row else "solution"
    return {**row, field: f"{row[field]}\n# variant {number}\n"}


def write(path: Path, shared: Path, which: str) -> int:
    """Write the set to ``path``; returns how many rows."""
    found = rows(shared, which)
    path.write_text("".join(json.dumps(row) + "\n" for row in found))
    return len(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--set", choices=["ten", "distinct", "hundred"], default="ten")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args()
    print(f"{write(args.out, args.shared, args.set)} samples written to {args.out}")


if __name__ == "__main__":
    main()
