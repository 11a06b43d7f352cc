"""Write ``legacy_store.sql`` and ``legacy_numbers.json``: a stored run and the numbers its report showed,
made by the code of commit 321781f (before issue 10's typed records), so tests can check that stores
written before a change still load and report the same numbers.

Run from the repository root: ``python -m tests.store.data.make_legacy_store``. Never regenerate
the committed files with newer code: their point is that older code wrote them.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import tempfile
from pathlib import Path

from tests.experiment.fakes import reply, write_benchmark

from refinelab.cli import main
from refinelab.store import Store

try:
    from refinelab.testing import serve
except ImportError:  # the code this was made with (321781f) kept the fake server in the models package
    from refinelab.models._fake_server import serve  # type: ignore[no-redef,import-not-found]  # gone since

HERE = Path(__file__).parent
SPEC = """
name = "legacy"
actors = ["fake", "priced"]
strategies = ["single-pass", "self-refine(max_iters=2)", "self-redraft(max_iters=2)", "exec-refine", "sampling(n=3)"]
base_url = "{url}"
repeats = 2
[[benchmarks]]
name = "jsonl"
data = "{data}"
limit = 4
[sandbox]
isolation = "none"
[models.endpoints.priced]
price = {{ input = 1.0, output = 2.0 }}
"""


def plain(value: object) -> object:
    """Dataclasses, tuples and dicts as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def main_() -> None:
    from refinelab.report import build_report

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = write_benchmark(folder / "problems.jsonl")
        with serve(reply) as server:
            spec = folder / "legacy.toml"
            spec.write_text(SPEC.format(url=server.base_url, data=data), encoding="utf-8")
            store_path = folder / "store.sqlite"
            code = main(
                ["run", str(spec), "--store", str(store_path), "--quiet", "--cache", str(folder / "cache.sqlite")], {}
            )
            assert code == 0, code
        with Store(store_path) as store:
            report = build_report(store)
            numbers = {
                "rows": plain(report.rows),
                "problems": report.problems,
                "pending": report.pending,
                "trajectories": plain(store.trajectories(report.run.id)),
                "export": list(store.export_rows(report.run.id)),
            }
        db = sqlite3.connect(store_path)
        dump = "\n".join(line for line in db.iterdump()) + "\n"
        db.close()
    (HERE / "legacy_store.sql").write_text(dump, encoding="utf-8")
    (HERE / "legacy_numbers.json").write_text(json.dumps(numbers, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main_()
