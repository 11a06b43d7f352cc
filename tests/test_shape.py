"""The shape the style guide asks for, checked on the source tree: no call passes more than six
positional arguments (a longer call is a record waiting to be named; STYLE.md practice 15)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "refinelab"
MAX_POSITIONAL = 6


def long_calls(source: str, name: str) -> list[str]:
    """``file:line`` of every call in ``source`` with more than :data:`MAX_POSITIONAL` positional arguments
    (a ``*args`` counts as one)."""
    tree = ast.parse(source, name)
    return [
        f"{name}:{node.lineno} ({len(node.args)} positional)"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and len(node.args) > MAX_POSITIONAL
    ]


def test_the_check_finds_a_long_call() -> None:
    assert long_calls("f(1, 2, 3, 4, 5, 6, 7)\nf(1, 2, 3, 4, 5, 6, x=7)\n", "x.py") == ["x.py:1 (7 positional)"]


def test_no_call_in_src_passes_more_than_six_positional_arguments() -> None:
    found = [
        call
        for path in sorted(SRC.rglob("*.py"))
        for call in long_calls(path.read_text(encoding="utf-8"), str(path.relative_to(SRC.parent)))
    ]
    assert found == [], "calls with more than six positional arguments (use keywords or a record):\n" + "\n".join(found)


def _is_fixed_tuple(node: ast.expr) -> bool:
    """``tuple[A, B]`` of things that are not all floats (a tuple of floats is a vector: a point, a span)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "tuple"):
        return False
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if any(isinstance(item, ast.Constant) and item.value is Ellipsis for item in items):
        return False
    return not all(isinstance(item, ast.Name) and item.id == "float" for item in items)


def tuple_aliases(source: str) -> set[str]:
    """Module-level names bound to a fixed-length tuple type (``Key = tuple[str, int]``)."""
    found = set()
    for node in ast.parse(source).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(target, ast.Name) and value is not None and _is_fixed_tuple(value):
            found.add(target.id)
    return found


def _arms(node: ast.expr) -> list[ast.expr]:
    """``A | B | None`` as its arms."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _arms(node.left) + _arms(node.right)
    return [node]


def tuple_packed(source: str, name: str, aliases: set[str]) -> list[str]:
    """``file:line function(parameter)`` for every parameter whose type is a fixed-length tuple of different
    things, written out or through one of ``aliases``: arguments packed to look like fewer (STYLE.md
    practice 15); a named record says what each part is."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = node.args
        for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            arms = _arms(argument.annotation) if argument.annotation is not None else []
            if any(_is_fixed_tuple(arm) or (isinstance(arm, ast.Name) and arm.id in aliases) for arm in arms):
                found.append(f"{name}:{node.lineno} {node.name}({argument.arg})")
    return found


def test_the_check_finds_a_tuple_packed_parameter() -> None:
    source = (
        "Where = tuple[Path, int | None]\n"
        "def f(how: tuple[str, tuple[Test, ...], Score], span: tuple[float, float], rest: tuple[int, ...]): ...\n"
        "def g(where: Where | None, pairs: Sequence[tuple[str, str]]): ...\n"
    )
    aliases = tuple_aliases(source)
    assert aliases == {"Where"}
    assert tuple_packed(source, "x.py", aliases) == ["x.py:2 f(how)", "x.py:3 g(where)"]


def imported_names(source: str) -> dict[str, str]:
    """Names a module imports from refinelab modules: name -> the module it comes from."""
    return {
        alias.asname or alias.name: node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("refinelab")
        for alias in node.names
    }


def test_no_function_in_src_takes_a_tuple_packed_parameter() -> None:
    paths = sorted(SRC.rglob("*.py"))
    sources = {".".join(path.relative_to(SRC.parent).with_suffix("").parts): path.read_text("utf-8") for path in paths}
    defined = {module: tuple_aliases(source) for module, source in sources.items()}
    found = []
    for module, source in sources.items():  # a module's own aliases and those it imports (names may repeat)
        imported = {name for name, origin in imported_names(source).items() if name in defined.get(origin, set())}
        found += tuple_packed(source, module, defined[module] | imported)
    assert found == [], "parameters packed into tuples (name the record instead):\n" + "\n".join(found)


WORKER = SRC / "sandbox" / "_worker"
HOST_SIDE = ("_pool.py", "_judge.py", "_suite.py", "_fake.py", "_limits.py")
"""The host's modules that write jobs or read replies."""


def raw_wire_keys(source: str, keys: set[str]) -> list[int]:
    """Lines where a string that is a wire key (a constant of ``protocol.py``) is written out as a dict key,
    an index, a ``.get`` argument or an ``in`` test, instead of named by its constant."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        spots: Sequence[ast.expr | None] = []
        if isinstance(node, ast.Dict):
            spots = list(node.keys)
        elif isinstance(node, ast.Subscript):
            spots = [node.slice]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            spots = node.args[:1]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            spots = [node.left]
        lines += [n.lineno for n in spots if isinstance(n, ast.Constant) and n.value in keys]
    return sorted(lines)


def test_both_sides_of_the_worker_protocol_name_its_keys_by_their_constants() -> None:
    """The host and the worker import ``protocol.py``; a key spelled out on one side would drift."""
    from refinelab.sandbox._worker import protocol

    values = {"CALL", "ASSERT", "STDIO", "FUNCTION", "CPU_LIMIT", "WALL_LIMIT"}  # values under keys, not keys
    keys = {
        value
        for name, value in vars(protocol).items()
        if name.isupper() and isinstance(value, str) and not name.startswith("S_") and name not in values
    }
    assert raw_wire_keys('d = {"s": 1}\nd["p"]\nd.get("next")\n"b" in d\nd["other"]\n', keys) == [1, 2, 3, 4]
    found = {
        path.name: lines
        for path in [*WORKER.glob("*.py"), *(SRC / "sandbox" / name for name in HOST_SIDE)]
        if (lines := raw_wire_keys(path.read_text(encoding="utf-8"), keys))
    }
    assert found == {}, found
