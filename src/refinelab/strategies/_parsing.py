"""Reading model output: code, critic verdicts, stated confidence.

Every parser returns a :class:`Parsed`: the value, or the reason it could not be read, always with the
raw text, so a parse failure is recorded as such and never silently becomes a pass or a fail.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from refinelab.records import Suggestion as Suggestion  # re-exported for the strategies

T = TypeVar("T")

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_CODE_START = re.compile(r"^(?:(?:async\s+)?def\s|class\s|import\s|from\s+[\w.]+\s+import\s|@\w)")
_CONFIDENCE = re.compile(r"confidence\W{0,5}(?:is|of|:|=)?\s*(\d+(?:\.\d+)?)\s*(%?)", re.IGNORECASE)


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A parse result."""

    value: T | None
    """What was read, or None."""
    error: str | None
    """Why nothing could be read, or None."""
    raw: str
    """The text as the model wrote it."""

    @property
    def ok(self) -> bool:
        """True when a value was read."""
        return self.error is None


@dataclass(frozen=True)
class Critique:
    """A Self-Refine critic's answer: ``{"critique": str, "passed": bool}``."""

    critique: str
    """What the critic says is wrong."""
    passed: bool
    """True when the critic accepts the code."""


@dataclass(frozen=True)
class RedraftCritique:
    """A Self-Redraft critic's answer: ``<critique>...</critique><suggestion>pass|refine|redraft</suggestion>``."""

    critique: str
    """What the critic says."""
    suggestion: Suggestion
    """Stop, fix details, or start over."""


def strip_reasoning(text: str) -> str:
    """Drop ``<think>...</think>`` blocks (and an unclosed one's opening part) from reasoning models."""
    text = _THINK.sub("", text)
    if "</think>" in text.lower():
        text = text[text.lower().rindex("</think>") + len("</think>") :]
    return text


def extract_code(text: str, entry_point: str | None = None) -> Parsed[str]:
    """The program in a reply: the fenced block that defines ``entry_point`` (else the last Python
    block, else the longest block); the whole reply when it is code without fences; else, in a reply
    that mixes prose and code without fences (or whose fence is never closed), the stretch of lines
    that parses as Python and defines ``entry_point`` (else the longest that defines something)."""
    body = strip_reasoning(text)
    blocks = [(lang.lower(), code) for lang, code in _FENCE.findall(body)]
    if blocks:
        return Parsed(_choose_block(blocks, entry_point), None, text)
    candidate = body.strip()
    if candidate and _is_python(candidate):
        return Parsed(candidate + "\n", None, text)
    found = _unfenced_code(body, entry_point)
    if found is not None:
        return Parsed(found + "\n", None, text)
    return Parsed(None, "no code block found and the reply is not Python code", text)


def _unfenced_code(body: str, entry_point: str | None) -> str | None:
    """Code between prose lines: from a line starting a definition or an import, through the lines that
    continue it (indented, blank, or another top-level statement), cut back until it parses."""
    lines = body.splitlines()
    spans: list[tuple[int, int, str]] = []
    for start, line in enumerate(lines):
        if not _CODE_START.match(line) or (spans and start < spans[-1][1]):
            continue
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t" or _statement(lines[end])):
            end += 1
        while end > start and not _is_python("\n".join(lines[start:end])):
            end -= 1
        code = "\n".join(lines[start:end]).strip()
        if end > start and re.search(r"^(?:async\s+)?(?:def|class)\s", code, re.MULTILINE):
            spans.append((start, end, code))
    if not spans:
        return None
    name = entry_point.split(".")[-1] if entry_point else None
    defining = [c for _, _, c in spans if name and re.search(rf"\b(?:def|class)\s+{re.escape(name)}\b", c)]
    return defining[-1] if defining else max((c for _, _, c in spans), key=len)


def _statement(line: str) -> bool:
    """A top-level line that is Python on its own (a header with a body added), and not a sentence that
    happens to parse (``Done``, ``Note: x``: a lone name, a bare annotation)."""
    text = line.rstrip()
    try:
        node = ast.parse(text + "\n    pass" if text.endswith(":") else text).body[0]
    except (SyntaxError, ValueError, IndexError):
        return False
    return not isinstance(node, ast.AnnAssign) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Name))


def _choose_block(blocks: list[tuple[str, str]], entry_point: str | None) -> str:
    if entry_point:
        name = entry_point.split(".")[-1]
        defining = [code for _, code in blocks if re.search(rf"\b(def|class)\s+{re.escape(name)}\b", code)]
        if defining:
            return defining[-1]
    python = [code for lang, code in blocks if lang in ("python", "py", "python3")]
    return python[-1] if python else max((code for _, code in blocks), key=len)


def _is_python(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def parse_critique_json(text: str) -> Parsed[Critique]:
    """A critic's JSON verdict; ``passed`` must be a JSON boolean."""
    body = strip_reasoning(text)
    for candidate in _json_objects(body):
        critique, passed = candidate.get("critique"), candidate.get("passed")
        if isinstance(passed, bool):
            return Parsed(Critique(critique if isinstance(critique, str) else "", passed), None, text)
    return Parsed(None, 'no JSON object with a boolean "passed" field', text)


def _json_objects(text: str) -> list[dict[str, object]]:
    """Every JSON object in the text: the whole text, fenced blocks, then balanced-brace spans."""
    spans = [text] + [code for _, code in _FENCE.findall(text)]
    start = text.find("{")
    while start != -1:
        end = _matching_brace(text, start)
        if end is not None:
            spans.append(text[start : end + 1])
        start = text.find("{", start + 1)
    found = []
    for span in spans:
        try:
            value = json.loads(span.strip())
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _matching_brace(text: str, start: int) -> int | None:
    """Index of the brace closing the one at ``start`` (braces inside JSON strings do not count)."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def parse_critique_xml(text: str) -> Parsed[RedraftCritique]:
    """A Self-Redraft critic's tagged verdict."""
    body = strip_reasoning(text)
    suggestion = re.search(r"<suggestion>\s*(\w+)\s*</suggestion>", body, re.IGNORECASE)
    if suggestion is None:
        return Parsed(None, "no <suggestion> tag", text)
    word = suggestion.group(1).lower()
    if word not in ("pass", "refine", "redraft"):
        return Parsed(None, f"unknown suggestion {word!r} (expected pass, refine or redraft)", text)
    critique = re.search(r"<critique>(.*?)</critique>", body, re.DOTALL | re.IGNORECASE)
    chosen: Suggestion = "pass" if word == "pass" else "refine" if word == "refine" else "redraft"
    return Parsed(RedraftCritique(critique.group(1).strip() if critique else "", chosen), None, text)


def extract_confidence(text: str) -> Parsed[float]:
    """A stated confidence in [0, 1]: ``Confidence: 0.8``, ``confidence 80%``, or ``{"confidence": 0.7}``."""
    body = strip_reasoning(text)
    for candidate in _json_objects(body):
        value = candidate.get("confidence")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _confidence(float(value), value > 1, text)
    match = _CONFIDENCE.search(body)
    if match is None:
        return Parsed(None, "no stated confidence", text)
    number = float(match.group(1))
    return _confidence(number, bool(match.group(2)) or number > 1, text)


def _confidence(number: float, percent: bool, raw: str) -> Parsed[float]:
    value = number / 100 if percent else number
    if not 0.0 <= value <= 1.0:
        return Parsed(None, f"confidence {number} is outside [0, 1] (or 0-100%)", raw)
    return Parsed(value, None, raw)
