"""Reading a spec file (``refinelab run SPEC.toml``): every key checked, every failure located in the file
(its line and field), and the sandbox chosen with :func:`refinelab.runtime.choose_sandbox` from the command
line's flags, the file's ``[sandbox]`` table and the settings, in that order. See docs/experiments.md."""

from __future__ import annotations

from pathlib import Path

from refinelab._toml import located, read_toml
from refinelab._validate import is_seconds
from refinelab.errors import InputError, UserError
from refinelab.experiment._spec import SAME, BenchmarkChoice, ExperimentSpec
from refinelab.models import ModelsConfig, checked_effort, load_models_config, url_problem
from refinelab.problems import BENCHMARKS, valid_date
from refinelab.runtime import NOT_GIVEN, NotGiven, SandboxRequest, choose_sandbox, workers_problem
from refinelab.sandbox import ISOLATION_MODES
from refinelab.strategies import Budget, StrategySpec

_TOP = {
    "name",
    "benchmarks",
    "strategies",
    "actors",
    "critics",
    "repeats",
    "base_url",
    "critic_base_url",
    "concurrency",
    "budget",
    "sandbox",
    "models",
    "reasoning_effort",
}
_BENCHMARK = {"name", "data", "problems", "after", "before", "release", "sample", "seed", "limit"}
_SANDBOX = {"isolation", "timeout", "workers", "allow_packages", "test_details", "agreement_timeout"}
_BUDGET = {"max_calls", "max_tokens", "max_cost_usd"}


def load_spec(
    path: str | Path, *, sandbox: SandboxRequest | None = None, defaults: SandboxRequest | None = None
) -> ExperimentSpec:
    """Read and validate a spec file; relative data paths are relative to the file. ``sandbox``: what the
    command line says about the sandbox, over the file's ``[sandbox]`` table; ``defaults``: what the settings
    say (``$REFINELAB_SANDBOX``, ``sandbox`` in ``refinelab.toml``), under it (:func:`choose_sandbox` decides
    the rest from the benchmarks, as for a run from flags)."""
    path = Path(path)
    table = read_toml(path)
    _known(path, table, _TOP, "")
    reader = _Reader(path)
    benchmarks = tuple(reader.benchmark(b, i) for i, b in enumerate(reader.tables(table, "benchmarks")))
    spec = ExperimentSpec(
        benchmarks=benchmarks,
        strategies=tuple(reader.strategy(text) for text in reader.strings(table, "strategies", required=True)),
        actors=tuple(reader.strings(table, "actors", required=True)),
        critics=tuple(reader.strings(table, "critics") or [SAME]),
        repeats=reader.integer(table, "repeats", 1),
        name=reader.string(table, "name") or path.stem,
        base_url=reader.urls(table, "base_url"),
        critic_base_url=reader.urls(table, "critic_base_url"),
        concurrency=reader.integer(table, "concurrency", 8),
        budget=reader.budget(table.get("budget", {})),
        sandbox=choose_sandbox(
            [b.name for b in benchmarks],
            sandbox or SandboxRequest(),
            reader.sandbox(table.get("sandbox", {})),
            defaults or SandboxRequest(),
        ),
        models=load_models_config(path) if "models" in table else ModelsConfig(),
        reasoning_effort=reader.efforts(table, "reasoning_effort"),
    )
    if not spec.benchmarks:
        raise located(path, "benchmarks", "missing: add at least one [[benchmarks]] table with a name")
    return spec


def _known(path: Path, table: dict[str, object], allowed: set[str], prefix: str) -> None:
    for key in table:
        if key not in allowed:
            raise located(path, f"{prefix}{key}", f"unknown key; known: {', '.join(sorted(allowed))}")


class _Reader:
    """Typed reads from a parsed spec, each failure located in the file."""

    def __init__(self, path: Path, where: str = "") -> None:
        self.path = path
        self.where = where
        """Dotted prefix of the table being read (``sandbox.``, ``benchmarks[0].``)."""

    def error(self, key: str, problem: str) -> InputError:
        return located(self.path, f"{self.where}{key}", problem)

    def tables(self, table: dict[str, object], key: str) -> list[dict[str, object]]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.error(key, "must be an array of tables ([[benchmarks]])")
        return value

    def strings(self, table: dict[str, object], key: str, *, required: bool = False) -> list[str]:
        value = table.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self.error(key, "must be a non-empty list of strings")
        return value

    def efforts(self, table: dict[str, object], key: str) -> tuple[str, ...]:
        """Reasoning efforts: a list of levels or thinking-token budgets (empty when the key is absent)."""
        value = table.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not value:
            raise self.error(key, 'must be a non-empty list of efforts, e.g. ["low", "high"]')
        try:
            found = tuple(checked_effort(v, "effort") for v in value)
        except UserError as exc:
            raise self.error(key, str(exc).removeprefix("effort: ")) from None
        return tuple(dict.fromkeys(found))

    def string(self, table: dict[str, object], key: str) -> str | None:
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            raise self.error(key, "must be a string")
        return value

    def date(self, table: dict[str, object], key: str) -> str | None:
        value = self.string(table, key)
        if value is not None and not valid_date(value):
            raise self.error(key, "must be a date written YYYY-MM-DD")
        return value

    def urls(self, table: dict[str, object], key: str) -> str | tuple[str, ...] | None:
        """A base URL, or a list of them (replicas of one model)."""
        value = table.get(key)
        if value is None:
            return None
        urls = [value] if isinstance(value, str) else value
        if not isinstance(urls, list) or not urls or not all(isinstance(url, str) for url in urls):
            raise self.error(key, "must be a URL, or a list of URLs (replicas of the model)")
        for url in urls:
            if (problem := url_problem(url)) is not None:
                raise self.error(key, problem)
        return value if isinstance(value, str) else tuple(urls)

    def integer(self, table: dict[str, object], key: str, default: int | None, *, minimum: int = 1) -> int:
        value = table.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise self.error(key, f"must be an integer >= {minimum}")
        return value

    def optional_integer(self, table: dict[str, object], key: str, minimum: int = 1) -> int | None:
        return None if key not in table else self.integer(table, key, None, minimum=minimum)

    def number(self, table: dict[str, object], key: str) -> float | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not is_seconds(value):
            raise self.error(key, "must be a positive number")
        return float(value)

    def strategy(self, text: str) -> StrategySpec:
        try:
            spec = StrategySpec.parse(text)
            spec.bind()
        except UserError as exc:
            raise located(self.path, "strategies", str(exc)) from None
        return spec

    def benchmark(self, table: dict[str, object], index: int) -> BenchmarkChoice:
        where = f"benchmarks[{index}]."
        _known(self.path, table, _BENCHMARK, where)
        reader = _Reader(self.path, where)
        name = reader.string(table, "name")
        if name not in BENCHMARKS:
            raise reader.error("name", f"unknown benchmark {name!r}; choose one of: {', '.join(BENCHMARKS)}")
        data = reader.string(table, "data")
        if data is not None and not Path(data).is_absolute():
            data = str((self.path.parent / data).resolve())
        after, before = reader.date(table, "after"), reader.date(table, "before")
        if after is not None and before is not None and after >= before:
            raise reader.error("before", f"must be later than after ({after})")
        return BenchmarkChoice(
            name,
            data=data,
            problems=tuple(reader.strings(table, "problems")),
            after=after,
            before=before,
            release=reader.string(table, "release"),
            sample=reader.optional_integer(table, "sample"),
            seed=reader.integer(table, "seed", 0, minimum=0),
            limit=reader.optional_integer(table, "limit"),
        )

    def budget(self, table: object) -> Budget:
        if not isinstance(table, dict):
            raise located(self.path, "budget", "must be a table")
        _known(self.path, table, _BUDGET, "budget.")
        reader = _Reader(self.path, "budget.")
        calls, tokens = reader.optional_integer(table, "max_calls"), reader.optional_integer(table, "max_tokens")
        return Budget(calls, tokens, reader.number(table, "max_cost_usd"))

    def sandbox(self, table: object) -> SandboxRequest:
        """What the ``[sandbox]`` table says (what it leaves out, :func:`choose_sandbox` decides)."""
        if not isinstance(table, dict):
            raise located(self.path, "sandbox", "must be a table")
        _known(self.path, table, _SANDBOX, "sandbox.")
        reader = _Reader(self.path, "sandbox.")
        isolation = reader.string(table, "isolation")
        if isolation is not None and isolation not in ISOLATION_MODES:
            raise reader.error("isolation", f"must be {', '.join(ISOLATION_MODES[:-1])} or {ISOLATION_MODES[-1]}")
        details = table.get("test_details", NOT_GIVEN)
        if not isinstance(details, (bool, NotGiven)):
            raise reader.error("test_details", "must be true or false")
        workers = reader.optional_integer(table, "workers")
        width = None if workers is None else workers_problem(workers)
        if width is not None:
            raise reader.error("workers", width)
        timeout, agreement = reader.number(table, "timeout"), reader.number(table, "agreement_timeout")
        return SandboxRequest(
            isolation=NOT_GIVEN if isolation is None else isolation,
            timeout=NOT_GIVEN if timeout is None else timeout,
            workers=NOT_GIVEN if workers is None else workers,
            allow_packages=tuple(reader.strings(table, "allow_packages")) if "allow_packages" in table else NOT_GIVEN,
            test_details=details,
            agreement_timeout=NOT_GIVEN if agreement is None else agreement,
        )
