"""``refinelab solve`` against a real OpenAI-compatible server on 127.0.0.1: exit codes, ``--json``, the
store, the response cache, project aliases and user errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.testing import OPENAI_REASONING, FakeOpenAI, serve
from tests.solve.conftest import FIB_DRAFT, FIB_FIXED, FIB_PROMPT, SUM_DRAFT, SUM_FIXED, SUM_PROMPT, fenced


def _content(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return "\n".join(str(m["content"]) for m in messages)


def refining(draft: str, fixed: str):  # type: ignore[no-untyped-def]
    """A server reply writer: the draft first, the fix once test results are fed back."""

    def reply(body: dict[str, object]) -> str:
        return fenced(fixed if "Test results" in _content(body) else draft)

    return reply


@pytest.fixture
def fib_server() -> Iterator[FakeOpenAI]:
    with serve(refining(FIB_DRAFT, FIB_FIXED)) as server:
        yield server


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def solve_cli(server: FakeOpenAI, *args: str, store: Path) -> list[str]:
    return [
        "solve",
        *args,
        "--model",
        "coder",
        "--base-url",
        server.base_url,
        "--store",
        str(store),
        "--strategy",
        "exec-refine",
        "--quiet",
    ]


def test_verified_exit_0_and_json_fields(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = solve_cli(
        fib_server,
        FIB_PROMPT,
        "--test",
        "fibonacci(1) == [0]",
        "--test",
        "fibonacci(5) == [0, 1, 1, 2, 3]",
        "--json",
        store=here / "s.sqlite",
    )
    assert main(argv, {}) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is True and data["kind"] == "function" and "n == 1" in data["code"]
    assert [(t["test"], t["origin"], t["verdict"]) for t in data["tests"]] == [
        ("fibonacci(1) == [0]", "given", "pass"),
        ("fibonacci(5) == [0, 1, 1, 2, 3]", "given", "pass"),
    ]
    assert data["attempts"] == 2 and data["cost_usd"] is None and data["seconds"] > 0
    assert data["usage"]["total_tokens"] == data["usage"]["prompt_tokens"] + data["usage"]["completion_tokens"] > 0
    assert len(fib_server.answered()) == 2


def test_json_counts_the_thinking_and_names_the_effort(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve(refining(FIB_DRAFT, FIB_FIXED), mimic=OPENAI_REASONING) as server:
        argv = solve_cli(server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", store=here / "s.sqlite")
        argv[argv.index("coder")] = "openai:o4-mini"
        assert main([*argv, "--reasoning-effort", "high", "--json"], {"OPENAI_API_KEY": "sk-test"}) == 0
        bodies = server.answered()
    data = json.loads(capsys.readouterr().out)
    assert len(bodies) == 2 and {body["reasoning_effort"] for body in bodies} == {"high"}
    assert data["usage"]["reasoning_tokens"] == sum(OPENAI_REASONING.thought(body) for body in bodies) > 0
    assert data["usage"]["reasoning_tokens"] < data["usage"]["completion_tokens"]  # thinking is part of them
    assert data["reasoning_effort"] == "high"


def test_json_without_an_effort_says_null_and_counts_no_thinking(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = solve_cli(fib_server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", "--json", store=here / "s.sqlite")
    assert main(argv, {}) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reasoning_effort"] is None and data["usage"]["reasoning_tokens"] == 0


def test_unverified_exit_1_labelled_with_the_best_attempt(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve(refining(FIB_DRAFT, FIB_DRAFT)) as server:
        argv = solve_cli(
            server,
            FIB_PROMPT,
            "--test",
            "fibonacci(1) == [0]",
            "--test",
            "fibonacci(3) == [0, 1, 1]",
            "--max-calls",
            "2",
            "--out",
            "fib.py",
            store=here / "s.sqlite",
        )
        assert main(argv, {}) == 1
    out = capsys.readouterr().out
    assert out.startswith("UNVERIFIED: passes 1 of 2 given tests")
    assert "seq = [0, 1]" in out and "✗ fibonacci(1) == [0] (given): fail" in out
    assert (here / "fib.py").read_text().startswith("# UNVERIFIED: passes 1 of 2 given tests\ndef fibonacci(n):")


def test_unverified_json(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve(refining(FIB_DRAFT, FIB_DRAFT)) as server:
        argv = solve_cli(
            server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", "--max-calls", "2", "--json", store=here / "s.sqlite"
        )
        assert main(argv, {}) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is False and data["tests"][0]["verdict"] == "fail" and data["stop_reason"] == "budget"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--io", "no arrow here"], "--io 'no arrow here': no such file, and not INPUT=>OUTPUT"),
        (["--test", "fibonacci(1) =="], "--test 'fibonacci(1) ==':1: not Python"),
        (["--tests", "missing.py"], "missing.py: no such file"),
        (["--tests", "bad.py"], "bad.py:2: not Python"),
        (["--test", "fibonacci(1) == [0]", "--strategy", "nope"], "strategy 'nope' is not available"),
        (["--test", "fibonacci(1) == [0]", "--max-calls", "0"], "max_calls"),
        (["--test", "fibonacci(1) == [0]", "--io", "1=>2"], "tested with --io pairs"),
    ],
)
def test_user_errors_exit_2_with_one_line(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (here / "bad.py").write_text("assert fibonacci(1) == [0]\nassert (\n")
    argv = [*solve_cli(fib_server, FIB_PROMPT, store=here / "s.sqlite"), *args]  # the last --strategy wins
    assert main(argv, {}) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert fib_server.log == []  # nothing was asked of the model
    assert not (here / "s.sqlite").exists() or "solve" not in (here / "s.sqlite").read_bytes().decode(errors="ignore")


def test_no_model_is_a_user_error(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", FIB_PROMPT, "--test", "fibonacci(1) == [0]"], {}) == 2
    assert "give --model" in capsys.readouterr().err


def test_stdio_with_io_pairs_and_a_pairs_file(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "pairs.txt").write_text("10 -4=>6\n")
    with serve(refining(SUM_DRAFT, SUM_FIXED)) as server:
        pairs = ["--io", "1 2=>3", "--io", "pairs.txt", "--io", "1 2=>3"]
        argv = solve_cli(server, SUM_PROMPT, *pairs, "--json", store=here / "s.sqlite")
        assert main(argv, {}) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "stdio" and [t["origin"] for t in data["tests"]] == ["io", "io"]  # 1 2=>3 once
    assert data["tests"][1]["test"] == "'10 -4\\n' => '6'"


def test_recorded_in_the_store_and_a_repeat_is_answered_from_the_cache(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = solve_cli(fib_server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", "--json", store=here / "s.sqlite")
    assert main(argv, {}) == 0
    first = json.loads(capsys.readouterr().out)
    asked = len(fib_server.log)
    assert main(argv, {}) == 0
    second = json.loads(capsys.readouterr().out)
    assert len(fib_server.log) == asked  # no new request reached the server
    assert second["cached"] is True and first["cached"] is False and second["code"] == first["code"]
    assert main(["report", "--list", "--store", str(here / "s.sqlite")], {}) == 0
    listing = capsys.readouterr().out
    assert first["run_id"] in listing and second["run_id"] in listing and "solve: Return the first n" in listing
    assert main(["report", first["run_id"], "--store", str(here / "s.sqlite")], {}) == 0
    assert "exec-refine" in capsys.readouterr().out
    assert main(["view", first["run_id"], "--store", str(here / "s.sqlite"), "--out", str(here / "site")], {}) == 0
    pages = "".join(path.read_text() for path in (here / "site" / "data").rglob("*.js"))
    assert "if n == 1" in pages  # the viewer shows the solve's attempts


def test_project_alias_and_prompt_from_a_file(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "refinelab.toml").write_text(
        f'[models.aliases]\nsmall = "coder"\n\n[models.endpoints.coder]\nbase_url = "{fib_server.base_url}"\n'
    )
    (here / "prompt.txt").write_text(FIB_PROMPT)
    (here / "test_fib.py").write_text(
        "from solution import fibonacci\n\ndef test_one():\n    assert fibonacci(1) == [0]\n"
    )
    argv = [
        "solve",
        "@prompt.txt",
        "--model",
        "small",
        "--tests",
        "test_fib.py",
        "--strategy",
        "exec-refine",
        "--quiet",
        "--json",
        "--store",
        "s.sqlite",
    ]
    assert main(argv, {}) == 0
    data = json.loads(capsys.readouterr().out)
    assert (
        data["verified"] is True
        and data["tests"][0]["origin"] == "given"
        and "def test_one" in data["tests"][0]["test"]
    )
    assert main(["report", data["run_id"], "--store", "s.sqlite"], {}) == 0  # what the alias stood for, recorded
    assert f"  actor small = coder: {fib_server.base_url} (its [models.endpoints] entry)" in capsys.readouterr().out


def test_a_real_process_reads_the_prompt_from_stdin(fib_server: FakeOpenAI, here: Path) -> None:
    argv = solve_cli(fib_server, "-", "--test", "fibonacci(1) == [0]", store=here / "s.sqlite")
    done = subprocess.run(
        [sys.executable, "-m", "refinelab", *argv],
        input=FIB_PROMPT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("VERIFIED: passes 1 of 1 given tests\ndef fibonacci(n):")


def test_progress_lines_on_standard_error_when_not_a_terminal(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        a
        for a in solve_cli(fib_server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", store=here / "s.sqlite")
        if a != "--quiet"
    ]
    assert main(argv, {}) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines[0].startswith("attempt 1: generating · tests passing 0/1 (best 0)")
    assert lines[1].startswith("attempt 2: generating · tests passing 1/1 (best 1)")
    assert "tests passing" not in captured.out


def test_ctrl_c_prints_the_best_attempt_so_far(here: Path) -> None:
    import signal
    import time

    release = threading.Event()

    def reply(body: dict[str, object]) -> str:
        if "Test results" in _content(body):
            release.wait(60)  # the refinement never comes back before the interrupt
        return fenced(FIB_DRAFT)

    with serve(reply) as server:
        argv = [
            a
            for a in solve_cli(
                server,
                FIB_PROMPT,
                "--test",
                "fibonacci(1) == [0]",
                "--test",
                "fibonacci(3) == [0, 1, 1]",
                store=here / "s.sqlite",
            )
            if a != "--quiet"
        ]
        process = subprocess.Popen(
            [sys.executable, "-m", "refinelab", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert process.stderr is not None
            first = process.stderr.readline()  # "attempt 1: ..." once the draft has been run
            assert first.startswith("attempt 1:"), first
            deadline = time.monotonic() + 30
            while len(server.log) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)  # the refinement request is in flight
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == 1, err
    assert out.startswith("UNVERIFIED: passes 1 of 2 given tests\ndef fibonacci(n):")
    assert "stopped: interrupted" in out


def test_signature_and_token_budget(fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "sig.py").write_text("def fibonacci(n: int) -> list[int]:\n")
    argv = solve_cli(
        fib_server,
        "Return the first n Fibonacci numbers.",
        "--signature",
        "@sig.py",
        "--test",
        "fibonacci(1) == [0]",
        "--max-tokens",
        "1",
        "--json",
        store=here / "s.sqlite",
    )
    assert main(argv, {}) == 1  # one call spends more than a token: the draft stands, unverified
    data = json.loads(capsys.readouterr().out)
    assert data["attempts"] == 1 and data["stop_reason"] == "budget" and data["verified"] is False
    (body,) = fib_server.answered()
    prompt = body["messages"][-1]["content"]
    assert "Starter code:\n```python\ndef fibonacci(n: int) -> list[int]:" in prompt


def test_help_lists_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["solve", "--help"], {})
    text = capsys.readouterr().out
    for flag in (
        "--model",
        "--base-url",
        "--test",
        "--tests",
        "--io",
        "--kind",
        "--signature",
        "--strategy",
        "--max-calls",
        "--max-tokens",
        "--max-cost",
        "--out",
        "--json",
    ):
        assert flag in text


def test_live_progress_on_a_terminal() -> None:
    import io

    from refinelab.cli._solve import _Display
    from refinelab.solve import SolveProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    now = [100.0]
    stream = Terminal()
    display = _Display(stream, quiet=False, clock=lambda: now[0])
    display.update(SolveProgress("generating", 1, 2, 2, 3, 1_234, 1.5))
    display.update(SolveProgress("testing", 2, 3, 3, 3, 2_345, 2.5))
    assert display.line() == "attempt 2: testing · tests passing 3/3 (best 3) · 2,345 tokens · 2.5 s"
    now[0] += 30  # a slow model call: the clock on the line keeps running without a new update
    assert display.line().endswith("· 32.5 s")
    display.finish()
    shown = stream.getvalue()
    assert "attempt 2: testing · tests passing 3/3 (best 3) · 2,345 tokens · " in shown
    assert "\x1b[" in shown  # drawn in place with terminal control codes, not one line per update


def test_a_solve_never_becomes_the_default_run(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After an experiment, a solve in the same store: report, report --html, export and view with no run
    id still show the experiment; report --list shows the solve apart, and its id reaches it."""
    from refinelab.store import Store
    from tests.report.test_report import fill

    store = here / "s.sqlite"
    with Store(store) as opened:
        fill(opened)  # the experiment "demo-1"
    assert main(solve_cli(fib_server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", "--json", store=store), {}) == 0
    solve_id = json.loads(capsys.readouterr().out)["run_id"]
    at = ["--store", str(store)]
    assert main(["report", *at, "--html", str(here / "r.html")], {}) == 0
    assert capsys.readouterr().out.startswith("run demo-1 ")
    assert "demo-1" in (here / "r.html").read_text() and solve_id not in (here / "r.html").read_text()
    assert main(["export", *at, "--out", str(here / "a.jsonl")], {}) == 0
    assert "of run demo-1 ->" in capsys.readouterr().out
    assert main(["view", *at, "--out", str(here / "site")], {}) == 0
    assert solve_id not in (here / "site" / "data" / "runs.js").read_text()
    assert main(["report", "--list", *at], {}) == 0
    listing = capsys.readouterr().out
    experiments, solves = listing.split("solves (1; `refinelab report ID` shows one):\n")
    assert "demo-1" in experiments and solve_id not in experiments and solve_id in solves
    assert main(["report", solve_id, *at], {}) == 0
    assert capsys.readouterr().out.startswith(f"run {solve_id} ")


def test_a_store_of_solves_only_has_no_default_run(
    fib_server: FakeOpenAI, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = here / "s.sqlite"
    assert main(solve_cli(fib_server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", store=store), {}) == 0
    capsys.readouterr()
    for command in (["report"], ["export", "--out", str(here / "a.jsonl")], ["view", "--out", str(here / "site")]):
        assert main([*command, "--store", str(store)], {}) == 2
        assert "no experiment stored yet, only 1 solve: give a solve's id" in capsys.readouterr().err
    assert not (here / "a.jsonl").exists() and not (here / "site").exists()


@pytest.mark.slow
def test_solve_with_a_local_model_in_a_terminal(tmp_path: Path, local_model_env: dict[str, str]) -> None:
    """No server: the real Gemma 3 270M in-process; the evidence counts its own tokens, and a repeat is
    answered from the response cache."""
    args = [sys.executable, "-m", "refinelab", "solve", FIB_PROMPT, "--model", "local:gemma-3-270m"]
    args += ["--test", "fibonacci(1) == [0]", "--strategy", "single-pass(max_tokens=48)"]
    args += ["--store", str(tmp_path / "s.sqlite"), "--json", "--quiet"]
    first = subprocess.run(args, env=local_model_env, capture_output=True, text=True, timeout=600)
    assert first.returncode in (0, 1), first.stderr  # verified or not: a 270M base model may write anything
    result = json.loads(first.stdout)
    assert result["model"] == "local:gemma-3-270m" and result["attempts"] == 1
    assert result["usage"]["completion_tokens"] > 0 and not result["usage"]["estimated"]
    again = subprocess.run(args, env=local_model_env, capture_output=True, text=True, timeout=600)
    assert json.loads(again.stdout)["code"] == result["code"] and json.loads(again.stdout)["cached"]


def test_sigterm_answers_with_the_best_attempt_exits_143_and_leaves_no_scratch_directory(here: Path) -> None:
    # `timeout`, `docker stop` and a cancelled CI job send SIGTERM: it used to end Python on the spot, the
    # sandbox pool's directory left in $TMPDIR and the solve's record never marked.
    import signal
    import time

    from refinelab.store import Store

    scratch = here / "tmp"
    scratch.mkdir()
    release = threading.Event()

    def reply(body: dict[str, object]) -> str:
        if "Test results" in _content(body):
            release.wait(60)  # the refinement never comes back before the signal
        return fenced(FIB_DRAFT)

    with serve(reply) as server:
        argv = solve_cli(server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", "--test", "fibonacci(3) == [0, 1, 1]",
                         store=here / "s.sqlite")  # fmt: skip
        env = {**os.environ, "TMPDIR": str(scratch)}
        process = subprocess.Popen([sys.executable, "-m", "refinelab", *argv], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while len(server.log) < 2 and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)  # the draft has been run; the refinement request is in flight
            assert process.poll() is None, "the solve ended before the refinement was asked for"
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=120)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == 143, err
    assert err.endswith("refinelab: terminated (SIGTERM)\n") and "Traceback" not in err
    assert out.startswith("UNVERIFIED: passes 1 of 2 given tests\ndef fibonacci(n):")
    assert "stopped: interrupted" in out
    assert list(scratch.iterdir()) == []
    with Store(here / "s.sqlite") as store:
        assert [run.status for run in store.runs()] == ["interrupted"]


def test_sigterm_before_any_attempt_exits_143(here: Path) -> None:
    import signal
    import time

    scratch = here / "tmp"
    scratch.mkdir()
    release = threading.Event()

    def reply(body: dict[str, object]) -> str:
        release.wait(60)  # the draft never comes back before the signal
        return fenced(FIB_DRAFT)

    with serve(reply) as server:
        argv = solve_cli(server, FIB_PROMPT, "--test", "fibonacci(1) == [0]", store=here / "s.sqlite")
        env = {**os.environ, "TMPDIR": str(scratch)}
        process = subprocess.Popen([sys.executable, "-m", "refinelab", *argv], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not server.log and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)  # the draft's request is in flight
            assert process.poll() is None, "the solve ended before the model was asked"
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=120)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert (process.returncode, out) == (143, ""), err
    assert err == "refinelab: terminated (SIGTERM)\n"
    assert list(scratch.iterdir()) == []
