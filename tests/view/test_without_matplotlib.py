"""Without matplotlib (the ``view`` extra) ``refinelab view`` and ``report --html`` still write every page
and table, link to no figure, and say that figures need matplotlib (they used to refuse to run). Run in a
subprocess where ``import matplotlib`` fails, as it does where the extra is not installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from refinelab.store import Store
from tests.report.test_report import fill

WITHOUT = "import sys; sys.modules['matplotlib'] = None; from refinelab.cli import main; sys.exit(main(sys.argv[1:]))"
NEED = "figures need matplotlib: pip install 'refinelab[view]'"


def refinelab_without_matplotlib(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT, *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_report_html_and_view_write_every_page_and_say_figures_need_matplotlib(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    with Store(store) as opened:
        fill(opened)
    done = refinelab_without_matplotlib("report", "--store", str(store), "--html", "r.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Every table" in page and "Critic verdicts against the hidden tests" in page and "<img" not in page
    assert "Figures need matplotlib: pip install &#x27;refinelab[view]&#x27;" in page
    assert done.stderr.strip() == f"refinelab: r.html: every table, no figures: {NEED} (or the dev extra)"
    done = refinelab_without_matplotlib("view", "--store", str(store), "--out", "site", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert NEED in done.stderr
    site = tmp_path / "site"
    assert not (site / "figures").exists()
    run_js = next((site / "data").glob("*/run.js")).read_text(encoding="utf-8")
    data = json.loads(run_js[run_js.index(", ") + 2 : run_js.rindex(");")])
    assert data["figures"] == [] and NEED in data["figures_note"] and data["tables_html"]
    assert len(list((site / "data").glob("*/p/*.js"))) == 4  # every problem's page
