"""A time limit that is not a positive, finite number of seconds (``nan``, ``inf``, ``1e400``) is a user
error on every route that takes one, before anything is written: it used to reach the sandbox, which
failed with a traceback (exit 1) after the store was created."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.errors import UserError
from refinelab.runtime import SandboxRequest, choose_sandbox
from tests.experiment.fakes import write_benchmark

NOT_SECONDS = ["nan", "inf", "1e400"]


def one_off(tmp_path: Path, *flags: str) -> list[str]:
    data = write_benchmark(tmp_path / "p.jsonl", 1)
    store = ["--store", str(tmp_path / "out" / "store.sqlite")]
    return ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", "vllm:m",
            *store, *flags]  # fmt: skip


@pytest.mark.parametrize("value", NOT_SECONDS)
def test_run_refuses_a_timeout_that_is_not_seconds(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(one_off(tmp_path, "--timeout", value), {}) == 2
    assert capsys.readouterr().err == "refinelab: error: --timeout must be a positive number of seconds\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", NOT_SECONDS)
def test_a_spec_file_refuses_one_at_its_line(tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    write_benchmark(tmp_path / "p.jsonl", 1)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'actors = ["vllm:m"]\nstrategies = ["single-pass"]\n[[benchmarks]]\nname = "jsonl"\ndata = "p.jsonl"\n'
        f"[sandbox]\ntimeout = {value}\n"
    )
    assert main(["run", str(spec), "--store", str(tmp_path / "out" / "store.sqlite")], {}) == 2
    err = capsys.readouterr().err
    assert err == "refinelab: error: " + f"{spec}:7: field 'sandbox.timeout': must be a positive number\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag", ["--timeout", "--agreement-timeout"])
def test_check_refuses_one(tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_benchmark(tmp_path / "p.jsonl", 1)
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "p0", "solution": "def f(x):\\n    return x\\n"}\n')
    argv = ["check", str(samples), "--benchmark", "jsonl", "--data", str(data), flag, "nan"]
    assert main(argv, {}) == 2
    assert capsys.readouterr().err == f"refinelab: error: {flag} must be a positive number of seconds\n"


def test_solve_refuses_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "out" / "store.sqlite"
    argv = [
        "solve",
        "Write f(x).",
        "--model",
        "vllm:m",
        "--test",
        "f(1) == 1",
        "--timeout",
        "inf",
        "--store",
        str(store),
    ]
    assert main(argv, {}) == 2
    assert capsys.readouterr().err == "refinelab: error: timeout must be a positive number of seconds, not inf\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("field", "request_"),
    [
        ("timeout", SandboxRequest(timeout=float("nan"))),
        ("agreement_timeout", SandboxRequest(agreement_timeout=float("nan"))),
    ],
)
def test_the_one_choice_refuses_one_from_a_library_caller(field: str, request_: SandboxRequest) -> None:
    with pytest.raises(UserError, match=f"{field} must be a positive number of seconds, not nan"):
        choose_sandbox(["humaneval"], request_)
