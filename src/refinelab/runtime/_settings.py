"""Settings, resolved once for every command: a flag wins, then a ``REFINELAB_*`` environment variable,
then the project's ``refinelab.toml``, then the default.

Every setting is declared once, in :data:`SETTINGS`: the field it fills, its environment variable, its
key in ``refinelab.toml`` and its type. A new setting is one more row there and one more field on
:class:`Flags` and :class:`Settings` (see docs/design/runtime.md). API keys are not settings: the model
layer reads them from the environment it is handed, so they never reach a stored record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from refinelab._progress import ProgressHook
from refinelab._toml import located
from refinelab.errors import UserError
from refinelab.models import ModelsConfig, RetryPolicy
from refinelab.problems import FetchOptions, default_cache_dir
from refinelab.runtime._given import NOT_GIVEN, NotGiven
from refinelab.runtime._project import find_config, read_project
from refinelab.runtime._sandbox import (
    SandboxRequest,
    SandboxSetting,
    parse_sandbox,
    sandbox_problem,
    workers_problem,
)
from refinelab.sandbox import IsolationMode, cluster_problem

DEFAULT_STORE = Path(".refinelab/store.sqlite")
"""The store when nothing names one: one per project, in the current directory."""


@dataclass(frozen=True)
class Setting:
    """One setting: where each layer spells it."""

    name: str
    """The field of :class:`Flags` and :class:`Settings` it fills."""
    variable: str
    """Its environment variable."""
    key: str
    """Its dotted key in ``refinelab.toml`` (``sandbox.workers`` is ``workers`` in ``[sandbox]``)."""
    kind: type
    """``Path``, ``str`` or ``int`` (an integer >= 1)."""
    check: Callable[[str], str | None] | None = None
    """For a ``str`` setting: what is wrong with a value (``None``: nothing), said naming the layer that
    gave it (the flag, the variable, or the file's line)."""
    parse: Callable[[str], object] | None = None
    """For a ``str`` setting: the typed value a checked text stands for (``sandbox``'s
    :class:`SandboxSetting`)."""


SETTINGS: tuple[Setting, ...] = (
    Setting("store", "REFINELAB_STORE", "store", Path),
    Setting("cache", "REFINELAB_CACHE", "cache", Path),
    Setting("cache_dir", "REFINELAB_CACHE_DIR", "cache_dir", Path),
    Setting("model", "REFINELAB_MODEL", "model", str),
    Setting("workers", "REFINELAB_WORKERS", "sandbox.workers", int),
    Setting("cluster", "REFINELAB_CLUSTER", "sandbox.cluster", str, cluster_problem),
    Setting("sandbox", "REFINELAB_SANDBOX", "sandbox", str, sandbox_problem, parse_sandbox),
)
"""Every layered setting. ``config`` (``--config``, ``$REFINELAB_CONFIG``) chooses the file itself."""


@dataclass(frozen=True, kw_only=True)
class Flags:
    """What the command line (or a library call) gave; :data:`NOT_GIVEN` for the rest."""

    config: Path | NotGiven = NOT_GIVEN
    """The project config (default: ``$REFINELAB_CONFIG``, else the nearest ``refinelab.toml``)."""
    store: Path | NotGiven = NOT_GIVEN
    """The store file."""
    cache: Path | NotGiven = NOT_GIVEN
    """The response cache file."""
    cache_dir: Path | NotGiven = NOT_GIVEN
    """Where computed benchmark files are kept."""
    model: str | NotGiven = NOT_GIVEN
    """The model ``solve`` uses."""
    workers: int | NotGiven = NOT_GIVEN
    """Sandbox workers."""
    cluster: str | NotGiven = NOT_GIVEN
    """A Ray cluster to run programs on (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``)."""
    sandbox: str | NotGiven = NOT_GIVEN
    """The sandbox, ``kind[:config]`` (``--sandbox``, or the older ``--isolation``): see :func:`parse_sandbox`."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Where things live and how models are reached; none of it changes results.

    :func:`resolve_settings` fills every field from the layers; a library caller may also build one
    directly (the defaults suit a test: the store in the current directory, no project config).
    """

    store: Path = DEFAULT_STORE
    """The store file."""
    cache: Path | None = None
    """The response cache file; ``None``: ``responses.sqlite`` beside the store (see :attr:`responses`)."""
    cache_dir: Path | None = None
    """Where downloaded benchmarks, computed benchmark files (HumanEval+'s expected outputs) and local model
    files are kept; ``None``: the user's cache folder (:func:`resolve_settings` fills it in)."""
    model: str | None = None
    """The model ``solve`` uses when none is given."""
    workers: int | None = None
    """Sandbox workers; ``None``: the command's own default (one per core; two for ``solve``)."""
    cluster: str | None = None
    """A Ray cluster to run programs on (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``); ``None``: this
    machine. Verdicts do not depend on it (see docs/design/cluster.md)."""
    sandbox: SandboxSetting | None = None
    """The ``sandbox`` setting (``kind[:config]``, parsed by :func:`parse_sandbox`): an isolation kind says
    how programs are confined (a layer under a spec file's ``[sandbox] isolation``, see :meth:`sandbox_request`),
    ``cluster:ADDRESS`` where they run (over :attr:`cluster`); ``None``: not set."""
    config: Path | None = None
    """The project config these settings were read from (``None``: there was none)."""
    models: ModelsConfig = field(default_factory=ModelsConfig)
    """The project config's ``[models]`` table: aliases, endpoints, deployments, concurrency, prices."""
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The environment models read their API keys from."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of model calls."""

    @property
    def cluster_address(self) -> str | None:
        """Where programs run: the ``sandbox`` setting's cluster (``cluster:ADDRESS``), else :attr:`cluster`,
        else ``None`` (this machine)."""
        if self.sandbox is not None and self.sandbox.cluster is not None:
            return self.sandbox.cluster
        return self.cluster

    @property
    def isolation(self) -> IsolationMode | NotGiven:
        """The isolation the ``sandbox`` setting names (:data:`NOT_GIVEN` for none, or for a cluster)."""
        return NOT_GIVEN if self.sandbox is None else self.sandbox.isolation

    def sandbox_request(self) -> SandboxRequest:
        """What these settings say about the sandbox's results, as a layer for
        :func:`~refinelab.runtime.choose_sandbox`: the isolation (under a command's flags and a spec file's
        ``[sandbox]`` table, which are more specific)."""
        return SandboxRequest(isolation=self.isolation)

    @property
    def responses(self) -> Path:
        """The response cache file: :attr:`cache`, else ``responses.sqlite`` beside the store."""
        return self.cache if self.cache is not None else self.store.with_name("responses.sqlite")

    @property
    def model_environ(self) -> Mapping[str, str]:
        """The environment the model layer is handed: :attr:`environ`, with ``REFINELAB_CACHE_DIR`` naming
        :attr:`cache_dir`, so local model files are kept where ``--cache-dir`` or ``cache_dir`` in
        ``refinelab.toml`` says, as benchmark files are."""
        if self.cache_dir is None:
            return self.environ
        return {**self.environ, "REFINELAB_CACHE_DIR": str(self.cache_dir)}

    def fetch_options(self, progress: ProgressHook | None = None) -> FetchOptions:
        """How benchmark files are downloaded and kept: in :attr:`cache_dir` (the user's cache folder when
        that is not set), reaching their hosts as the environment says (``HF_ENDPOINT``, offline...)."""
        return FetchOptions(self.cache_dir or default_cache_dir(self.environ), self.environ, progress)


def resolve_settings(flags: Flags, environ: Mapping[str, str], cwd: Path) -> Settings:
    """Every setting from its first layer that gives it: ``flags``, then ``environ``, then the project
    config found from ``cwd``, then the default (see :data:`SETTINGS`)."""
    config = find_config(cwd, environ, None if isinstance(flags.config, NotGiven) else flags.config)
    found, models = read_project(config, {s.key: s.kind for s in SETTINGS}) if config else ({}, ModelsConfig())
    chosen: dict[str, tuple[Any, int]] = {}  # each value checked against its setting's kind, and its layer
    where: dict[str, str | Path | None] = {}  # the flag, variable or file that gave it
    for setting in SETTINGS:
        given = getattr(flags, setting.name)
        if not isinstance(given, NotGiven):
            where[setting.name] = "--" + setting.name.replace("_", "-")
            chosen[setting.name] = _checked(setting, given, where[setting.name]), 0
        elif environ.get(setting.variable):
            value = _from_environment(setting, environ[setting.variable])
            where[setting.name] = "$" + setting.variable
            chosen[setting.name] = _checked(setting, value, where[setting.name]), 1
        elif setting.key in found:
            where[setting.name] = config
            chosen[setting.name] = _checked(setting, found[setting.key], config), 2
    settings = Settings(config=config, models=models, environ=environ, cache_dir=default_cache_dir(environ))
    settings = replace(settings, **{name: value for name, (value, _) in _one_cluster(chosen).items()})
    return _width_checked(settings, where.get("workers"))


def _width_checked(settings: Settings, layer: str | Path | None) -> Settings:
    """``settings``, once the pool width they name fits this machine (:func:`workers_problem`); a
    cluster's nodes run their own number of workers, so there it is not this machine's to hold."""
    if settings.workers is None or settings.cluster_address is not None:
        return settings
    problem = workers_problem(settings.workers)
    if problem is not None:
        raise _refusal(layer, "sandbox.workers", problem)
    return settings


def _one_cluster(chosen: dict[str, tuple[Any, int]]) -> dict[str, tuple[Any, int]]:
    """``chosen`` without a ``sandbox = "cluster:ADDRESS"`` that a ``cluster`` of a more specific layer (a
    flag over the environment, the environment over the file) spells otherwise: the same choice, so the
    more specific one wins (within one layer the ``sandbox`` spelling does: :attr:`Settings.cluster_address`)."""
    sandbox, layer = chosen.get("sandbox", (None, 3))
    if (
        isinstance(sandbox, SandboxSetting)
        and sandbox.cluster is not None
        and chosen.get("cluster", (None, 3))[1] < layer
    ):
        return {name: value for name, value in chosen.items() if name != "sandbox"}
    return chosen


def _from_environment(setting: Setting, text: str) -> object:
    if setting.kind is Path:
        return Path(text)
    if setting.kind is int:
        if not text.strip().isdigit() or int(text) < 1:
            raise UserError(f"${setting.variable} must be an integer >= 1, not {text!r}")
        return int(text)
    return text


def _checked(setting: Setting, value: object, layer: str | Path | None) -> object:
    """``value``, once :attr:`Setting.check` finds nothing wrong with it; ``layer``: the flag or variable
    that gave it, or the project config's path."""
    problem = setting.check(value) if setting.check is not None and isinstance(value, str) else None
    if problem is None:
        return setting.parse(value) if setting.parse is not None and isinstance(value, str) else value
    raise _refusal(layer, setting.key, problem)


def _refusal(layer: str | Path | None, key: str, problem: str) -> UserError:
    """``problem``, said naming the flag or variable that gave the value, or the file's line of ``key``."""
    if isinstance(layer, Path):
        return located(layer, key, problem)
    return UserError(f"{layer}: {problem}")
