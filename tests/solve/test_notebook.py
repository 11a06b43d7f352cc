"""A real Jupyter kernel (nbclient + ipykernel) runs a notebook that calls ``solve`` against a local
OpenAI-compatible server: the synchronous call works under the kernel's running event loop, and the
output cell holds the code and the verdict."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from refinelab.testing import serve
from tests.solve.conftest import FIB_DRAFT, FIB_FIXED, FIB_PROMPT, fenced

nbformat = pytest.importorskip("nbformat", reason="the notebook test needs the dev extra (nbformat, nbclient)")
nbclient = pytest.importorskip("nbclient", reason="the notebook test needs the dev extra (nbclient, ipykernel)")
pytest.importorskip("ipykernel", reason="the notebook test needs the dev extra (ipykernel)")


def _reply(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return fenced(FIB_FIXED if any("Test results" in str(m["content"]) for m in messages) else FIB_DRAFT)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_solve_in_a_real_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = Path(__file__).resolve().parents[2] / "src"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")]))
    with serve(_reply) as server:
        cells = [
            "import asyncio\nfrom refinelab import solve\nfrom refinelab.solve import SolveOptions",
            "asyncio.get_running_loop()  # the kernel's loop is running: solve() must still work",
            (
                f"solution = solve({FIB_PROMPT!r}, 'coder', tests=['fibonacci(1) == [0]', 'fibonacci(4) == [0, 1, 1, 2]'],\n"
                f"                 options=SolveOptions(strategy='exec-refine', base_url={server.base_url!r}, store='store.sqlite'))\n"
                "solution"
            ),
            "print(solution.verified, solution.evidence.attempts)",
        ]
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(text) for text in cells])
        client = nbclient.NotebookClient(
            notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        )
        client.execute()
    shown = notebook.cells[2].outputs[0]["data"]
    assert "VERIFIED: passes 2 of 2 given tests" in shown["text/html"]
    assert "if n == 1:" in shown["text/html"]  # the refined code, html-escaped where needed
    assert "attempt 1 (refine)" in shown["text/html"]
    assert notebook.cells[3].outputs[0]["text"] == "True 2\n"
    assert len(server.answered()) == 2
    assert (tmp_path / "store.sqlite").exists()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_solve_with_a_local_model_in_a_real_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_model_env: dict[str, str]
) -> None:
    """The same in a kernel, with the model in-process (real Gemma 3 270M): no server anywhere; a repeat is
    answered from the response cache."""
    source = Path(__file__).resolve().parents[2] / "src"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("REFINELAB_CACHE_DIR", local_model_env["REFINELAB_CACHE_DIR"])
    options = "SolveOptions(strategy='single-pass(max_tokens=48)', store='store.sqlite')"
    call = f"solve({FIB_PROMPT!r}, 'local:gemma-3-270m', tests=['fibonacci(1) == [0]'], options={options})"
    cells = [
        "from refinelab import solve\nfrom refinelab.solve import SolveOptions",
        f"solution = {call}\nsolution",
        "e = solution.evidence\nprint(e.model, e.attempts, e.usage.completion_tokens > 0, e.usage.estimated, e.cached)",
        f"again = {call}\nprint(again.evidence.cached, again.code == solution.code)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(text) for text in cells])
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    (shown,) = [out["data"]["text/html"] for out in notebook.cells[1].outputs if "data" in out]  # after progress
    assert "VERIFIED" in shown  # VERIFIED or UNVERIFIED: a 270M base model may write anything
    assert notebook.cells[2].outputs[-1]["text"] == "local:gemma-3-270m 1 True False False\n"
    assert notebook.cells[3].outputs[-1]["text"].endswith("True True\n")
    assert (tmp_path / "store.sqlite").exists()
