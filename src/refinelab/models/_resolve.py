"""Model strings a user would type, and the endpoints behind them.

``openai:gpt-4.1-mini``, ``vllm:Qwen/Qwen2.5-Coder-7B-Instruct`` (http://localhost:8000/v1),
``ollama:qwen2.5-coder:7b`` (http://localhost:11434/v1), ``llamacpp:NAME`` (http://localhost:8080/v1),
or any ``NAME`` with an explicit ``base_url``; ``local:...`` runs a GGUF file in this process (no server:
see :mod:`refinelab.models._local_files`). Keys come from the environment; aliases and per-endpoint
settings from the project config (``[models]`` in ``refinelab.toml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from urllib.parse import urlsplit

from refinelab._toml import located, read_toml
from refinelab.errors import InputError, UserError
from refinelab.models._cache import ResponseCache
from refinelab.models._model import Model, RetryPolicy
from refinelab.models._prices import Price, PriceTable


@dataclass(frozen=True)
class Provider:
    """Where a provider's server usually listens, and where its key comes from."""

    base_url: str
    """Default base URL."""
    key_variable: str
    """Environment variable holding the API key."""
    key_required: bool
    """False for local servers that accept any key."""


PROVIDERS: Mapping[str, Provider] = {
    "openai": Provider("https://api.openai.com/v1", "OPENAI_API_KEY", True),
    "vllm": Provider("http://localhost:8000/v1", "VLLM_API_KEY", False),
    "ollama": Provider("http://localhost:11434/v1", "OLLAMA_API_KEY", False),
    "llamacpp": Provider("http://localhost:8080/v1", "LLAMACPP_API_KEY", False),
}


@dataclass(frozen=True)
class EndpointSettings:
    """Per-endpoint settings from the project config."""

    base_url: str | None = None
    """Where the server listens."""
    concurrency: int | None = None
    """Requests in flight."""
    price: Price | None = None
    """USD per million tokens."""
    deployment: str | None = None
    """A tag naming this deployment of the model (``a100-fp8``, ``rev-2024-09``): part of the response
    cache key and of the run id, so two servers serving one model name differently are kept apart. The
    address is not: the same deployment moved to another port or host resumes its runs."""

    def merge(self, override: EndpointSettings) -> EndpointSettings:
        """These settings with every field ``override`` sets replaced."""
        changes = {f.name: getattr(override, f.name) for f in fields(self) if getattr(override, f.name) is not None}
        return replace(self, **changes)


@dataclass(frozen=True)
class ModelsConfig:
    """The ``[models]`` part of the project config."""

    aliases: Mapping[str, str] = field(default_factory=dict)
    """Short names for model strings."""
    endpoints: Mapping[str, EndpointSettings] = field(default_factory=dict)
    """Settings by model string."""

    def merge(self, override: ModelsConfig) -> ModelsConfig:
        """This config with ``override``'s aliases and endpoint settings on top (field by field)."""
        endpoints = dict(self.endpoints)
        for name, settings in override.endpoints.items():
            endpoints[name] = endpoints.get(name, EndpointSettings()).merge(settings)
        return ModelsConfig({**self.aliases, **override.aliases}, endpoints)

    def model(self, text: str) -> str:
        """The model string an alias stands for (``text`` itself when it is no alias)."""
        return self.aliases.get(text, text)

    def settings(self, text: str) -> EndpointSettings:
        """The endpoint settings of a model string or alias."""
        return self.endpoints.get(self.model(text), EndpointSettings())


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model string."""

    model: str
    """``provider:name``."""
    base_url: str
    """Where to send requests."""
    api_key: str
    """The key to send."""


def load_models_config(path: str | Path) -> ModelsConfig:
    """The ``[models]`` table of a project config file (``refinelab.toml``); unknown keys are errors.

    ::

        [models.aliases]
        small = "vllm:Qwen/Qwen2.5-Coder-3B-Instruct"

        [models.endpoints."vllm:Qwen/Qwen2.5-Coder-3B-Instruct"]
        base_url = "http://gpu-box:8000/v1"
        concurrency = 32
        price = { input = 0.0, output = 0.0 }
    """
    data = read_toml(Path(path))
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise InputError(path, None, "models", "must be a table")
    _only(models, {"aliases", "endpoints"}, path, "models")
    aliases = models.get("aliases", {})
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        raise InputError(path, None, "models.aliases", "must map names to model strings")
    endpoints = {
        name: _endpoint(table, path, f"models.endpoints.{name}") for name, table in models.get("endpoints", {}).items()
    }
    return ModelsConfig(dict(aliases), endpoints)


def _only(table: dict[str, object], allowed: set[str], path: str | Path, where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise located(Path(path), f"{where}.{unknown[0]}", "unknown key")


def _endpoint(table: object, path: str | Path, where: str) -> EndpointSettings:
    if not isinstance(table, dict):
        raise InputError(path, None, where, "must be a table")
    _only(table, {"base_url", "concurrency", "price", "deployment"}, path, where)
    url, concurrency, price = table.get("base_url"), table.get("concurrency"), table.get("price")
    deployment = table.get("deployment")
    if url is not None and not isinstance(url, str):
        raise InputError(path, None, f"{where}.base_url", "must be a string")
    if url is not None and (problem := url_problem(url)) is not None:
        raise InputError(path, None, f"{where}.base_url", problem)
    if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
        raise InputError(path, None, f"{where}.concurrency", "must be a positive integer")
    if deployment is not None and (not isinstance(deployment, str) or not deployment):
        raise InputError(path, None, f"{where}.deployment", "must be a non-empty string")
    priced = _price(price, path, f"{where}.price") if price is not None else None
    return EndpointSettings(url, concurrency, priced, deployment)


def url_problem(url: str) -> str | None:
    """What is wrong with a base URL (``None``: nothing): it needs ``http://`` or ``https://`` and a host."""
    parts = urlsplit(url)
    if "://" not in url:
        return f"base URL {url!r} has no scheme: write http://{url} (or https://)"
    if parts.scheme not in ("http", "https"):
        return f"base URL {url!r} is not an http:// or https:// address"
    if not parts.hostname:
        return f"base URL {url!r} has no host: write e.g. {parts.scheme}://localhost:8000/v1"
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        return f"base URL {url!r} has an invalid port"
    return None


def _price(table: object, path: str | Path, where: str) -> Price:
    if not isinstance(table, dict):
        raise InputError(path, None, where, "must be a table like { input = 0.4, output = 1.6 }")
    _only(table, {"input", "output", "cached_input"}, path, where)
    values = {k: v for k, v in table.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0}
    if set(values) != set(table) or not {"input", "output"} <= set(values):
        raise InputError(path, None, where, "needs non-negative 'input' and 'output' (USD per million tokens)")
    return Price(float(values["input"]), float(values["output"]), values.get("cached_input"))


def resolve(
    text: str, environ: Mapping[str, str], *, base_url: str | None = None, config: ModelsConfig | None = None
) -> ModelSpec:
    """Resolve a model string (after aliases) into a model, URL and key; user errors say what to fix."""
    config = config or ModelsConfig()
    settings = config.settings(text)
    text = config.model(text)
    if base_url is not None and (problem := url_problem(base_url)) is not None:
        raise UserError(problem)
    provider_name, _, name = text.partition(":")
    provider = PROVIDERS.get(provider_name) if name else None
    if provider is None:
        url = base_url or settings.base_url
        if url is None:
            known = ", ".join(f"{p}:NAME" for p in PROVIDERS)
            raise UserError(f"model {text!r}: use one of {known}, or give --base-url for an OpenAI-compatible server")
        key = environ.get("REFINELAB_API_KEY") or environ.get("OPENAI_API_KEY") or "EMPTY"
        return ModelSpec(text if ":" in text else f"custom:{text}", url, key)
    provider_key = environ.get(provider.key_variable)
    if provider_key is None and provider.key_required and base_url is None:
        raise UserError(f"model {text!r} needs an API key: set {provider.key_variable}")
    return ModelSpec(text, base_url or settings.base_url or provider.base_url, provider_key or "EMPTY")


def open_model(
    text: str,
    environ: Mapping[str, str],
    *,
    base_url: str | None = None,
    config: ModelsConfig | None = None,
    cache: ResponseCache | None = None,
    retry: RetryPolicy | None = None,
) -> Model:
    """A :class:`Model` for a model string, with the config's concurrency and prices applied; ``local:...``
    runs the model in this process (its file is fetched into the cache on first use)."""
    from refinelab.models._openai import OpenAIBackend

    config = config or ModelsConfig()
    if config.model(text).startswith("local:"):
        return _open_local(text, environ, base_url, config, cache, retry)
    spec = resolve(text, environ, base_url=base_url, config=config)
    settings = config.settings(text)
    prices = PriceTable({spec.model: settings.price} if settings.price else None)
    backend = OpenAIBackend(spec.model, spec.base_url, spec.api_key)
    concurrency, deployment = settings.concurrency or 16, settings.deployment or ""
    return Model(backend, concurrency=concurrency, retry=retry, cache=cache, prices=prices, deployment=deployment)


def _open_local(
    text: str,
    environ: Mapping[str, str],
    base_url: str | None,
    config: ModelsConfig,
    cache: ResponseCache | None,
    retry: RetryPolicy | None,
) -> Model:
    """A :class:`Model` over the in-process llama.cpp backend."""
    from refinelab.models._local import LocalBackend, LocalOptions
    from refinelab.models._local_files import resolve_local

    model = config.model(text)
    if base_url is not None:
        raise UserError(f"model {model!r} runs in this process: --base-url does not apply to it")
    settings = config.settings(text)
    backend = LocalBackend(model, resolve_local(model.partition(":")[2], environ), LocalOptions.from_environ(environ))
    prices = PriceTable({model: settings.price} if settings.price else None)
    concurrency, deployment = settings.concurrency or 16, settings.deployment or ""
    return Model(backend, concurrency=concurrency, retry=retry, cache=cache, prices=prices, deployment=deployment)
