"""The batch child's own loop (``run_function_child``), run in a forked process with a snapshot that records
what it is asked: the interpreter is put back between two programs of a child, never after its last one."""

from __future__ import annotations

import json
import os

import pytest

from refinelab.sandbox._worker import child, codec
from refinelab.sandbox._worker import protocol as wire


class Recorder:
    """Stands in for the worker's snapshot and says what the child asked of it."""

    def __init__(self, taint_after: int | None = None) -> None:
        self.calls: list[str] = []
        self.taint_after = taint_after

    def bind(self, in_own_namespace: bool) -> None:
        self.calls.append("bind")

    def restore(self, namespace: dict[str, object]) -> str | None:
        self.calls.append(f"restore {namespace.get('N')}")
        return "tainted" if namespace.get("N") == self.taint_after else None


def _run(
    programs: int, first: int, *, isolate: bool = False, taint_after: int | None = None
) -> tuple[list[str], list[int]]:
    """What the snapshot was asked, and which programs the child loaded, running ``programs`` programs from
    ``first`` in a forked child (its output pipes pointed at /dev/null)."""
    job = {
        wire.PROGRAMS: [f"N = {n}\n" for n in range(programs)],
        wire.SUITES: [{wire.ENTRY_POINT: None, wire.SETUP: "", wire.PRELUDE: "", wire.TESTS: []}],
        wire.SUITE_OF: [0] * programs,
        wire.LIMITS: {},
        wire.ISOLATE: isolate,
    }
    calls_read, calls_write = os.pipe()
    report_read, report_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked child
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            recorder = Recorder(taint_after)
            child.SNAPSHOT = recorder  # type: ignore[assignment]
            child.run_function_child(job, first, 0, child.Reporter(report_write, "nonce"))
            os.write(calls_write, json.dumps(recorder.calls).encode())
        finally:
            os._exit(0)
    os.close(calls_write)
    os.close(report_write)
    reports = _read_all(report_read)  # first: the child blocks on a full report pipe, never on its last small write
    calls = _read_all(calls_read)
    os.waitpid(pid, 0)
    loads = [m[wire.PROGRAM] for m in map(json.loads, reports.splitlines()) if wire.BEGIN in m]
    return json.loads(calls), loads


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def test_the_interpreter_is_put_back_between_programs_and_not_after_the_last() -> None:
    assert _run(3, 0) == (["bind", "restore 0", "restore 1"], [0, 1, 2])


@pytest.mark.parametrize(("programs", "first"), [(1, 0), (3, 2)])
def test_a_child_with_one_program_to_run_never_puts_the_interpreter_back(programs: int, first: int) -> None:
    assert _run(programs, first) == ([], [first])


def test_an_isolated_program_ends_its_child_without_putting_the_interpreter_back() -> None:
    assert _run(3, 1, isolate=True) == ([], [1])


def test_a_tainted_child_stops_after_the_program_that_tainted_it() -> None:
    assert _run(4, 0, taint_after=1) == (["bind", "restore 0", "restore 1"], [0, 1])


@pytest.mark.parametrize(
    "message",
    [
        {wire.PROGRAM: 0, wire.INDEX: 3, wire.STATUS: wire.S_VALUE, wire.VALUE: [1, 2.5, None, True, {"F": "nan"}]},
        {wire.PROGRAM: 1, wire.INDEX: -1, wire.BEGIN: 0.012345678901234567},
        {wire.PROGRAM: 0, wire.INDEX: 0, wire.STATUS: wire.S_OK, wire.NEXT: [0, 1, 1e-7]},
        {wire.STATUS: wire.S_ERROR, wire.MESSAGE: 'd\u00e9j\u00e0 \u2603 "quoted"\n\tline', wire.TRACEBACK: ""},
    ],
)
def test_a_report_is_written_as_json_dumps_writes_it(message: dict[str, object]) -> None:
    assert codec.JSON_TEXT is not json.dumps  # the quick encoder, on this Python
    assert codec.JSON_TEXT(message) == json.dumps(message)
