"""Settings, resolved once for every command: a flag wins, then a ``REFINELAB_*`` environment variable,
then the project's ``refinelab.toml``, then the default.

Every setting is declared once, in :data:`SETTINGS`: the field it fills, its environment variable, its
key in ``refinelab.toml`` and its type. A new setting is one more row there and one more field on
:class:`Flags` and :class:`Settings` (see docs/design/runtime.md). API keys are not settings: the model
layer reads them from the environment it is handed, so they never reach a stored record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from refinelab._progress import ProgressHook
from refinelab.errors import UserError
from refinelab.models import ModelsConfig, RetryPolicy
from refinelab.problems import FetchOptions, default_cache_dir
from refinelab.runtime._project import find_config, read_project


class NotGiven:
    """The type of :data:`NOT_GIVEN`: "this layer says nothing", as opposed to ``None``."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN: Final = NotGiven()
"""A flag (or argument) that was not given: the lower layers decide."""

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


SETTINGS: tuple[Setting, ...] = (
    Setting("store", "REFINELAB_STORE", "store", Path),
    Setting("cache", "REFINELAB_CACHE", "cache", Path),
    Setting("cache_dir", "REFINELAB_CACHE_DIR", "cache_dir", Path),
    Setting("model", "REFINELAB_MODEL", "model", str),
    Setting("workers", "REFINELAB_WORKERS", "sandbox.workers", int),
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
    config: Path | None = None
    """The project config these settings were read from (``None``: there was none)."""
    models: ModelsConfig = field(default_factory=ModelsConfig)
    """The project config's ``[models]`` table: aliases, endpoints, deployments, concurrency, prices."""
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The environment models read their API keys from."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of model calls."""

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
    chosen: dict[str, Any] = {}  # each value checked against its setting's kind
    for setting in SETTINGS:
        given = getattr(flags, setting.name)
        if not isinstance(given, NotGiven):
            chosen[setting.name] = given
        elif environ.get(setting.variable):
            chosen[setting.name] = _from_environment(setting, environ[setting.variable])
        elif setting.key in found:
            chosen[setting.name] = found[setting.key]
    settings = Settings(config=config, models=models, environ=environ, cache_dir=default_cache_dir(environ))
    return replace(settings, **chosen)


def _from_environment(setting: Setting, text: str) -> object:
    if setting.kind is Path:
        return Path(text)
    if setting.kind is int:
        if not text.strip().isdigit() or int(text) < 1:
            raise UserError(f"${setting.variable} must be an integer >= 1, not {text!r}")
        return int(text)
    return text
