"""A tiny benchmark and a deterministic model behind a real OpenAI-compatible server, for runner tests.

The "model" answers from the request alone (so results do not depend on timing or order): a first
draft is wrong for odd-numbered problems; a refinement request gets the right program; the critic
accepts programs that contain ``# ok`` and rejects the others. Problem 3's correct draft is rejected
and "fixed" into a wrong one (a regression error).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

N_PROBLEMS = 6


def write_benchmark(path: Path, n: int = N_PROBLEMS) -> Path:
    """``n`` problems ``p0``.. asking for ``f(x) = x + i``."""
    lines = []
    for i in range(n):
        lines.append(
            {
                "id": f"p{i}",
                "kind": "function",
                "entry_point": "f",
                "prompt": f"Problem p{i}: write f(x) returning x + {i}.",
                "visible_tests": [{"call": "f(1)", "expected": 1 + i}],
                "hidden_tests": [{"call": "f(1)", "expected": 1 + i}, {"call": "f(10)", "expected": 10 + i}],
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _program(i: int, *, right: bool, mark: str = "") -> str:
    body = f"x + {i}" if right else f"x + {i} if x < 5 else 0"
    return f"```python\ndef f(x):{mark}\n    return {body}\n```"


def reply(request: dict[str, object]) -> str:
    """The deterministic model (see the module docstring)."""
    messages = request["messages"]
    assert isinstance(messages, list)
    text = "\n".join(str(m["content"]) for m in messages)
    system = str(messages[0]["content"])
    found = re.search(r"Problem p(\d+)", text)
    i = int(found.group(1)) if found else 0
    if "reviewer" in system.lower() and "flagged" not in system:
        ok = "# ok" in text
        return json.dumps({"critique": "" if ok else "The loop bound looks wrong.", "passed": ok})
    if "Previous program" in text or "Latest attempt" in text:
        return _program(i, right=i != 3, mark=" # ok")
    if i == 3:
        return _program(i, right=True)
    return _program(i, right=i % 2 == 0, mark=" # ok" if i % 2 == 0 else "")
