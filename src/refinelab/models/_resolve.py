"""Model strings a user would type, and the endpoints behind them.

``openai:gpt-4.1-mini``, ``vllm:Qwen/Qwen2.5-Coder-7B-Instruct`` (http://localhost:8000/v1),
``ollama:qwen2.5-coder:7b`` (http://localhost:11434/v1), ``llamacpp:NAME`` (http://localhost:8080/v1),
or any ``NAME`` with an explicit ``base_url``; ``local:...`` runs a GGUF file in this process (no server:
see :mod:`refinelab.models._local_files`). Keys come from the environment; aliases and per-endpoint
settings from the project config (``[models]`` in ``refinelab.toml``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from urllib.parse import urlsplit

from refinelab._toml import located, read_toml
from refinelab.errors import UserError
from refinelab.models._prices import Price
from refinelab.models._profiles import (
    EFFORT_LEVELS,
    EffortControl,
    ProfileOverrides,
    TokenLimit,
    named_profile,
)


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

    base_url: str | tuple[str, ...] | None = None
    """Where the server listens; several URLs for replicas of the model (each request goes to the least
    loaded healthy one; see ``refinelab.models._replicas``)."""
    concurrency: int | None = None
    """Requests in flight (per replica)."""
    price: Price | None = None
    """USD per million tokens."""
    deployment: str | None = None
    """A tag naming this deployment of the model (``a100-fp8``, ``rev-2024-09``): part of the response
    cache key and of the run id, so two servers serving one model name differently are kept apart. The
    address is not: the same deployment moved to another port or host resumes its runs."""
    context: int | None = None
    """``local:`` models: each sequence's context window in tokens (default 4096)."""
    threads: int | None = None
    """``local:`` models: threads that decode (default: llama-cpp-python's)."""
    n_gpu_layers: int | None = None
    """``local:`` models: layers offloaded to the GPU, -1 for all (default: all when llama.cpp has a GPU
    backend, none otherwise)."""
    profile: str | None = None
    """The model profile to use instead of the one its name matches (``openai-o-series`` for a deployment
    named ``my-o4``): see ``refinelab.models._profiles``."""
    effort_control: EffortControl | None = None
    """How a reasoning effort is sent (``reasoning_effort``, ``chat_template_kwargs``, ``llamacpp``,
    ``ollama``, ``not_taken``)."""
    token_limit: TokenLimit | None = None
    """The field that caps a reply: ``max_tokens`` or ``max_completion_tokens``."""
    refuses: tuple[str, ...] | None = None
    """Settings the model does not take (never sent; recorded as not sent when asked for)."""
    thinking_budgets: Mapping[str, int | None] | None = None
    """Thinking tokens of each effort level on servers that take a budget (``{ low = 1024, high = 8192 }``)."""

    @property
    def profile_overrides(self) -> ProfileOverrides:
        """The keys that change the model's profile."""
        return ProfileOverrides(
            self.profile, self.effort_control, self.token_limit, self.refuses, self.thinking_budgets
        )

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
    """Where to send requests (the first replica's URL when there are several)."""
    api_key: str
    """The key to send."""
    replicas: tuple[str, ...] = ()
    """Every replica's base URL when the model has several (``base_url`` is the first); empty otherwise."""

    @property
    def base_urls(self) -> tuple[str, ...]:
        """Every URL requests may go to."""
        return self.replicas or (self.base_url,)


def load_models_config(path: str | Path) -> ModelsConfig:
    """The ``[models]`` table of a project config file (``refinelab.toml``); unknown keys are errors.

    ::

        [models.aliases]
        small = "vllm:Qwen/Qwen2.5-Coder-3B-Instruct"

        [models.endpoints."vllm:Qwen/Qwen2.5-Coder-3B-Instruct"]
        base_url = "http://gpu-box:8000/v1"   # or a list of replicas: ["http://gpu-1:8000/v1", ...]
        concurrency = 32                      # per replica
        price = { input = 0.0, output = 0.0 }
    """
    data = read_toml(Path(path))
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise located(Path(path), "models", "must be a table")
    _only(models, {"aliases", "endpoints"}, path, "models")
    aliases = models.get("aliases", {})
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        raise located(Path(path), "models.aliases", "must map names to model strings")
    endpoints = {
        name: _endpoint(table, path, f"models.endpoints.{name}") for name, table in models.get("endpoints", {}).items()
    }
    return ModelsConfig(dict(aliases), endpoints)


def _only(table: dict[str, object], allowed: set[str], path: str | Path, where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise located(Path(path), f"{where}.{unknown[0]}", "unknown key")


_ENDPOINT_KEYS = {"base_url", "concurrency", "price", "deployment", *(f.name for f in fields(ProfileOverrides))}


def _endpoint(table: object, path: str | Path, where: str) -> EndpointSettings:
    if not isinstance(table, dict):
        raise located(Path(path), where, "must be a table")
    _only(table, {*_ENDPOINT_KEYS, *_LOCAL_KEYS}, path, where)
    local = _local_settings(table, path, where)
    url = _base_url(table.get("base_url"), path, where)
    concurrency, price, deployment = table.get("concurrency"), table.get("price"), table.get("deployment")
    if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
        raise located(Path(path), f"{where}.concurrency", "must be a positive integer")
    if deployment is not None and (not isinstance(deployment, str) or not deployment):
        raise located(Path(path), f"{where}.deployment", "must be a non-empty string")
    priced = _price(price, path, f"{where}.price") if price is not None else None
    found = _profile_keys(table, path, where)  # each value checked against its field's type
    return replace(EndpointSettings(url, concurrency, priced, deployment, **local), **found)  # type: ignore[arg-type]


_CHOICES: Mapping[str, tuple[str, ...]] = {
    "effort_control": ("reasoning_effort", "chat_template_kwargs", "llamacpp", "ollama", "local", "not_taken"),
    "token_limit": ("max_tokens", "max_completion_tokens"),
}


def _profile_keys(table: Mapping[str, object], path: str | Path, where: str) -> dict[str, object]:
    """The endpoint's profile overrides (``profile``, ``effort_control``, ``token_limit``, ``refuses``,
    ``thinking_budgets``), each checked."""
    found: dict[str, object] = {}
    if "profile" in table:
        try:
            found["profile"] = named_profile(str(table["profile"])).name
        except UserError as exc:
            raise located(Path(path), f"{where}.profile", str(exc)) from None
    for key, choices in _CHOICES.items():
        if key in table:
            if table[key] not in choices:
                raise located(Path(path), f"{where}.{key}", f"must be one of {', '.join(choices)}")
            found[key] = table[key]
    if "refuses" in table:
        found["refuses"] = _refuses(table["refuses"], path, f"{where}.refuses")
    if "thinking_budgets" in table:
        found["thinking_budgets"] = _budgets(table["thinking_budgets"], path, f"{where}.thinking_budgets")
    return found


def _refuses(value: object, path: str | Path, where: str) -> tuple[str, ...]:
    known = ("temperature", "top_p", "seed", "stop", "json_schema", "reasoning_effort")
    if not isinstance(value, list) or not all(v in known for v in value):
        raise located(Path(path), where, f"must be a list of settings among {', '.join(known)}")
    return tuple(value)


def _budgets(value: object, path: str | Path, where: str) -> dict[str, int | None]:
    levels = [level for level in EFFORT_LEVELS if level != "none"]
    if not isinstance(value, dict) or not all(
        k in levels and isinstance(v, int) and not isinstance(v, bool) and v > 0 for k, v in value.items()
    ):
        raise located(Path(path), where, f"must map levels ({', '.join(levels)}) to positive token counts")
    return dict(value)


_LOCAL_KEYS = {"context": 256, "threads": 1, "n_gpu_layers": -1}
"""Settings only a ``local:`` model has, and the least value each takes."""


def _local_settings(table: dict[str, object], path: str | Path, where: str) -> dict[str, int]:
    """The ``local:`` settings of an endpoint table, each an integer at least its least value."""
    found = {key: table[key] for key in _LOCAL_KEYS if key in table}
    if found and not where.startswith("models.endpoints.local:"):
        raise located(Path(path), f"{where}.{next(iter(found))}", "applies to local: models only")
    for key, value in found.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < _LOCAL_KEYS[key]:
            raise located(Path(path), f"{where}.{key}", f"must be an integer, at least {_LOCAL_KEYS[key]}")
    return {key: int(value) for key, value in found.items() if isinstance(value, int)}


def _base_url(value: object, path: str | Path, where: str) -> str | tuple[str, ...] | None:
    """A base URL, or a non-empty list of them (replicas), each checked."""
    if value is None:
        return None
    urls = [value] if isinstance(value, str) else value
    if not isinstance(urls, list) or not urls or not all(isinstance(url, str) for url in urls):
        raise located(Path(path), f"{where}.base_url", "must be a URL, or a list of URLs (replicas of the model)")
    for url in urls:
        if (problem := url_problem(url)) is not None:
            raise located(Path(path), f"{where}.base_url", problem)
    return value if isinstance(value, str) else tuple(urls)


def base_urls(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """A base URL setting as a tuple of URLs (empty: none given)."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


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
        raise located(Path(path), where, "must be a table like { input = 0.4, output = 1.6 }")
    _only(table, {"input", "output", "cached_input"}, path, where)
    values = {k: v for k, v in table.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0}
    if set(values) != set(table) or not {"input", "output"} <= set(values):
        raise located(Path(path), where, "needs non-negative 'input' and 'output' (USD per million tokens)")
    return Price(float(values["input"]), float(values["output"]), values.get("cached_input"))


def resolve(
    text: str,
    environ: Mapping[str, str],
    *,
    base_url: str | Sequence[str] | None = None,
    config: ModelsConfig | None = None,
) -> ModelSpec:
    """Resolve a model string (after aliases) into a model, URL(s) and key; user errors say what to fix.

    ``base_url`` (one URL, or several for replicas) overrides the config's and the provider's.
    """
    config = config or ModelsConfig()
    settings = config.settings(text)
    text = config.model(text)
    given = base_urls(base_url)
    for url in given:
        if (problem := url_problem(url)) is not None:
            raise UserError(problem)
    urls = given or base_urls(settings.base_url)
    provider_name, _, name = text.partition(":")
    provider = PROVIDERS.get(provider_name) if name else None
    if provider is None:
        if not urls:
            known = ", ".join(f"{p}:NAME" for p in PROVIDERS)
            raise UserError(f"model {text!r}: use one of {known}, or give --base-url for an OpenAI-compatible server")
        key = environ.get("REFINELAB_API_KEY") or environ.get("OPENAI_API_KEY") or "EMPTY"
        return _spec(text if ":" in text else f"custom:{text}", urls, key)
    provider_key = environ.get(provider.key_variable)
    if provider_key is None and provider.key_required and not given:
        raise UserError(f"model {text!r} needs an API key: set {provider.key_variable}")
    return _spec(text, urls or (provider.base_url,), provider_key or "EMPTY")


def _spec(model: str, urls: tuple[str, ...], key: str) -> ModelSpec:
    return ModelSpec(model, urls[0], key, urls if len(urls) > 1 else ())
