"""The examples a prompt shows for its function, read as tests.

Prompts write examples in many ways; each of these becomes a value test (``f(1) == 2``):

- doctest lines: ``>>> f(1)`` then ``2``;
- a call and its answer on one line: ``f(1) == 2``, ``* f(1) -> 2``, ``f(1) returns true``, ``f(1) = 2``,
  ``f(1)  # returns 2``, ``f(1) # => 2 (because ...)``, ``f(1) -> 3 - 1 = 2`` (the answer after the last ``=``);
- the parameters by name (CodeSignal's style): ``For x = [1, 2], k = 3 the output should be 4``;
- an input and an output block (LeetCode's style): ``Input: x = [1, 2], k = 3`` then ``Output: 4``; an input
  without names (``Input: [1, 2]``) when it supplies exactly the function's parameters.

Only calls of the entry point with literal arguments and a literal answer count, so an example that needs
earlier statements or prints is left out rather than misread; named values must be the function's own
parameters (or, when a name differs, one value per parameter with every matching name in its place). An
answer written as one parenthesised value, ``("Venus")``, is left out: a string in Python, a one-element
tuple in the author's mind. When the prompt shows no example for its function but does for one name it
never defines (HumanEval's ``grade_equation`` in ``numerical_letter_grade``), those examples are read as
examples of the function. Examples of a method (an entry point ``Solution.twoSum``) call it on a new
instance: ``Solution().twoSum([2, 7], 9) == [0, 1]``.
"""

from __future__ import annotations

import ast
import builtins
import doctest
import keyword
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from refinelab.problems._model import CallTest

_SEPARATOR = re.compile(
    r"\s*(?P<hash>#\s*)?(?P<sep>==>|==|->|=>|➞|→|=|\bshould return\b|\breturns?\b|\bshould be\b|\bgives\b)"
    r"\s*(?P<right>.+?)\s*$"
)
_WORDS = {"true": "True", "false": "False", "none": "None"}
_FLOAT_TOLERANCE = 1e-6
_FOR = re.compile(
    r"\bfor\s+(?P<args>[A-Za-z_]\w*\s*=.+?)\s*,?\s*(?:then\s+)?the\s+(?:output|result|answer|return value)\s+"
    r"(?:should\s+be|will\s+be|is)\s*:?\s*(?P<out>.+?)\s*$",
    re.IGNORECASE,
)
_INPUT_OUTPUT = re.compile(
    r"^[ \t]*Input\s*:(?P<input>.*?)^[ \t]*Output\s*:\s*(?P<output>[^\n]+)", re.MULTILINE | re.DOTALL | re.IGNORECASE
)
_NAMED = re.compile(r"\s*([A-Za-z_]\w*)\s*[=:]\s*")
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")
_CALL_LINES = 20
"""A call written over several lines is read over at most this many more."""

Reader = Callable[[str, str], list[CallTest]]


def prompt_examples(prompt: str, entry_point: str | None, settled: Collection[str] = ()) -> list[CallTest]:
    """The examples a prompt shows for ``entry_point`` (see the module docstring), each once, in the order
    the readers find them. Prompts can be wrong (HumanEval's ``median`` example is): an example whose call
    is in ``settled`` (the expressions of tests given by someone who knows better) yields to it, and two
    examples of one call that disagree are both left out."""
    if entry_point is None:
        return []
    owner, _, name = entry_point.rpartition(".")
    found = _examples(prompt, name) or ([] if owner else _examples_of_an_undefined_name(prompt, name))
    if owner:
        found = [_as_method(test, owner, name) for test in found]
    answers: dict[str, set[str]] = {}
    for test in found:
        answers.setdefault(test.expr, set()).add(repr(test.expected))
    unique: dict[tuple[str, str], CallTest] = {}
    for test in found:
        if test.expr not in settled and len(answers[test.expr]) == 1:
            unique.setdefault((test.expr, repr(test.expected)), test)
    return list(unique.values())


def _examples(prompt: str, name: str) -> list[CallTest]:
    readers: list[Reader] = [_doctest_examples, _arrow_examples, _for_examples, _input_output_examples]
    return [test for read in readers for test in read(prompt, name)]


def _examples_of_an_undefined_name(prompt: str, entry_point: str) -> list[CallTest]:
    """Examples calling the one name the prompt calls but never defines, as examples of ``entry_point``."""
    defined = set(re.findall(r"\b(?:def|class)\s+([A-Za-z_]\w*)", prompt))
    names = dict.fromkeys(_CALLED.findall(prompt))
    candidates = [n for n in names if n not in defined and not hasattr(builtins, n) and not keyword.iskeyword(n)]
    found = {name: tests for name in candidates if (tests := _examples(prompt, name))}
    if len(found) != 1:
        return []
    ((name, tests),) = found.items()
    return [_renamed(test, name, entry_point) for test in tests]


def _renamed(test: CallTest, old: str, new: str) -> CallTest:
    tree = ast.parse(test.expr, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = new
    return CallTest(ast.unparse(tree), test.expected, atol=test.atol)


def _as_method(test: CallTest, owner: str, method: str) -> CallTest:
    """``method(...)`` as ``Owner().method(...)``: a LeetCode answer's ``Solution().twoSum(...)``."""
    tree = ast.parse(test.expr, mode="eval")
    for node in ast.walk(tree):
        if _calls(node, method):
            assert isinstance(node, ast.Call)
            node.func = ast.Attribute(ast.Call(ast.Name(owner, ast.Load()), [], []), method, ast.Load())
    return CallTest(ast.unparse(tree), test.expected, atol=test.atol)


def _doctest_examples(prompt: str, entry_point: str) -> list[CallTest]:
    try:
        examples = doctest.DocTestParser().get_examples(prompt)
    except ValueError:
        return []
    tests = []
    for example in examples:
        source, want = example.source.strip(), example.want.strip()
        if not want:
            # doctest's own reading: a call that shows nothing returned None (``>>> longest([])``);
            # ``>>> f(1) == 2`` with no answer line is read as an arrow example
            tests.append(_example(source, "None", entry_point) if _is_call_of(source, entry_point) else None)
            continue
        # the answer runs to a blank line or the next >>>; prose after it (another example written as
        # ``f(1) == 2``, the docstring's end) is not part of it, and a long answer may span lines: the
        # first lines that read as a value are the answer
        lines = want.splitlines()
        tests.append(_first(_example(source, "\n".join(lines[:end]), entry_point) for end in range(len(lines), 0, -1)))
    return [t for t in tests if t is not None]


def _is_call_of(source: str, entry_point: str) -> bool:
    """``source`` is one call of the entry point, nothing around it."""
    try:
        return _calls(ast.parse(source, mode="eval").body, entry_point)
    except SyntaxError:
        return False


def _arrow_examples(prompt: str, entry_point: str) -> list[CallTest]:
    """A call and its answer on one line. A bare ``=`` counts only when the prompt defines nothing with it
    (``tri(n) = 1 + n / 2`` makes ``tri(1) = 3`` a definition, not an example), and never after ``#``."""
    call = re.compile(rf"(?<![\w.]){re.escape(entry_point)}\s*\(")
    defines = re.search(rf"\b{re.escape(entry_point)}\s*\([A-Za-z_]\w*\)\s*=[^=]", prompt) is not None
    lines = prompt.splitlines()
    tests = []
    for number, line in enumerate(lines):
        start = call.search(line)
        if start is None or line.lstrip().startswith("def "):
            continue
        text = line[start.start() :]
        found = _arrow_example(text, entry_point, defines)
        if found is None and _open_brackets(text) > 0:  # a call written over several lines
            found = _arrow_example(_joined(text, lines[number + 1 :]), entry_point, defines)
        if found is not None:
            tests.append(found)
    return tests


def _arrow_example(text: str, entry_point: str, defines: bool) -> CallTest | None:
    """The example ``text`` (from the call on) writes, if it is one: the call, a separator, an answer."""
    for cut in _separators(text):
        match = _SEPARATOR.match(text, cut)
        if match is None or (match.group("sep") == "=" and (defines or match.group("hash"))):
            continue
        found = _first(_example(text[:cut], answer, entry_point) for answer in _answers(match.group("right")))
        if found is not None:
            return found
    return None


def _open_brackets(text: str) -> int:
    """Brackets opened and not closed in ``text`` (a rough count: brackets in strings count too)."""
    return sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")


def _joined(text: str, following: list[str]) -> str:
    """``text`` and as many of the ``following`` lines (at most :data:`_CALL_LINES`) as close its brackets,
    on one line."""
    parts = [text]
    for line in following[:_CALL_LINES]:
        parts.append(line.strip())
        if _open_brackets(" ".join(parts)) <= 0:
            break
    return " ".join(parts)


def _separators(text: str) -> list[int]:
    """Where a separator may start: after each closing parenthesis."""
    return [i + 1 for i, char in enumerate(text) if char == ")"]


def _for_examples(prompt: str, entry_point: str) -> list[CallTest]:
    """``For x = [1, 2], k = 3 the output should be 4``: the parameters by name."""
    parameters = _parameters(prompt, entry_point)
    if parameters is None:
        return []
    tests = []
    for line in prompt.splitlines():
        match = _FOR.search(line)
        if match is None:
            continue
        call = _call(entry_point, parameters, _named_values(match.group("args")))
        found = _answered(call, match.group("out"), entry_point)
        if found is not None:
            tests.append(found)
    return tests


def _input_output_examples(prompt: str, entry_point: str) -> list[CallTest]:
    """``Input: x = [1, 2], k = 3`` (names on one line, or one per line as ``x : [1, 2]``) then ``Output: 4``;
    or an input without names that supplies exactly the function's parameters."""
    parameters = _parameters(prompt, entry_point)
    if parameters is None:
        return []
    tests = []
    for match in _INPUT_OUTPUT.finditer(prompt):
        text = ", ".join(line.strip() for line in match.group("input").splitlines() if line.strip())
        named = _named_values(text)
        call = _call(entry_point, parameters, named) if named else _positional_call(entry_point, parameters, text)
        found = _answered(call, match.group("output"), entry_point)
        if found is not None:
            tests.append(found)
    return tests


def _answered(call: str | None, answer: str, entry_point: str) -> CallTest | None:
    """The test of ``call`` answering ``answer`` (read as :func:`_answers` says), if both can be read."""
    return None if call is None else _first(_example(call, a, entry_point) for a in _answers(answer))


@dataclass(frozen=True)
class _Parameters:
    """A function's parameters, as examples must supply them."""

    names: list[str]
    """Parameter names, in order (without ``self``)."""
    required: int
    """How many of the first ones have no default."""


def _parameters(prompt: str, entry_point: str) -> _Parameters | None:
    """The entry point's parameter names (without ``self``) and how many have no default."""
    match = re.search(rf"\bdef\s+{re.escape(entry_point)}\s*\((.*?)\)\s*(?:->[^:\n]*)?:", prompt, re.DOTALL)
    if match is None:
        return None
    try:
        function = ast.parse(f"def _({match.group(1)}): pass").body[0]
    except SyntaxError:
        return None
    assert isinstance(function, ast.FunctionDef)
    arguments = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    required = len(arguments) - len(function.args.defaults)
    if arguments[:1] == ["self"]:
        return _Parameters(arguments[1:], required - 1)
    return _Parameters(arguments, required)


def _named_values(text: str) -> list[tuple[str, str]]:
    """``x = [1, 2], k = 3`` as ``[("x", "[1, 2]"), ("k", "3")]``, up to the first piece that is not a name
    and a literal (prose such as ``the sum of digits will be 1`` ends it)."""
    pairs: list[tuple[str, str]] = []
    position = 0
    while (match := _NAMED.match(text, position)) is not None:
        start = match.end()
        ends = [i for i, char in enumerate(text) if char == "," and i > start] + [len(text)]
        value = next((text[start:end].strip() for end in ends if _is_literal(text[start:end])), None)
        if value is None:
            break
        pairs.append((match.group(1), value))
        position = text.index(value, start) + len(value) + 1
    return pairs


def _call(entry_point: str, parameters: _Parameters, named: list[tuple[str, str]]) -> str | None:
    """The call with the named values in the parameters' order, when they are the function's first
    parameters and at least every one without a default; or, when some names differ from the
    parameters' (``bucket_capacity`` for ``capacity``), in the order written, if there is one value per
    parameter and every name that does match is in its own place."""
    names, required = parameters.names, parameters.required
    given = dict(named)
    count = len(given)
    if not named or count != len(named) or count < required:
        return None
    if set(given) == set(names[:count]):
        return f"{entry_point}({', '.join(given[name] for name in names[:count])})"
    in_place = all(name == names[i] for i, (name, _) in enumerate(named) if name in names)
    if count == len(names) and in_place:
        return f"{entry_point}({', '.join(value for _, value in named)})"
    return None


def _positional_call(entry_point: str, parameters: _Parameters, text: str) -> str | None:
    names, required = parameters.names, parameters.required
    try:
        values = ast.literal_eval(f"({text},)") if text.strip() else None
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(values, tuple) or not required <= len(values) <= len(names):
        return None
    return f"{entry_point}({text})"


def _answers(right: str) -> list[str]:
    """What an answer may be: the text itself, the value after the last ``=`` of a worked computation
    (``19 - 5 - 6 = 8``), or the value before a remark (``'No' (the name should ...)``, ``24 # 21 + 3``)."""
    right = right.strip().removesuffix('"""').removesuffix("'''").rstrip(".,;").strip()  # a one-line docstring's end
    found = [_WORDS.get(right.lower(), right)]
    if "=" in right.replace("==", "").replace("=>", ""):
        found.append(right.rsplit("=", 1)[1].strip())
    for remark in re.finditer(r"\s+(?:\(|#)", right):
        found.append(right[: remark.start()])
    return found


def _is_literal(text: str) -> bool:
    try:
        ast.literal_eval(text.strip())
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return False
    return bool(text.strip())


def _example(source: str, want: str, entry_point: str) -> CallTest | None:
    """A value test for ``source`` (a call of the entry point using only literals) answering ``want``."""
    try:
        call = ast.parse(source, mode="eval").body
        expected = ast.literal_eval(want)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    if not any(_calls(node, entry_point) for node in ast.walk(call)):
        return None
    names = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)} - {entry_point}
    if any(not hasattr(builtins, name) for name in names):
        return None
    if re.fullmatch(r"\(.*\)", want.strip(), re.DOTALL) and not isinstance(expected, tuple):
        return None  # ``("Venus")``: a string to Python, a one-element tuple to whoever wrote it
    tolerance = _FLOAT_TOLERANCE if isinstance(expected, float) else None
    return CallTest(ast.unparse(call), expected, atol=tolerance)


def _calls(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _first(tests: Iterable[CallTest | None]) -> CallTest | None:
    """The first test that was read, if any."""
    return next((t for t in tests if t is not None), None)
