"""Which backend runs a model string: one table, keyed by the string's provider prefix.

Every model a user names is either served (an OpenAI-compatible server over HTTP: ``openai:``, ``vllm:``,
``ollama:``, ``llamacpp:``, any name with a ``base_url``) or run in this process (``local:``, llama.cpp).
:data:`BACKENDS` holds a :class:`BackendKind` record per prefix that is not served; adding a backend is one
record there. Nothing outside this table asks which class a backend is or what its model string starts with:
:func:`open_model` opens through the record, :func:`backend_kind` answers whether a model has a server at all
(``_endpoints.py``) and how ``refinelab ping`` reports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from refinelab.errors import UserError
from refinelab.models._cache import ResponseCache
from refinelab.models._model import Backend, Model, RetryPolicy
from refinelab.models._prices import PriceTable
from refinelab.models._profiles import Accepts, profile_for
from refinelab.models._resolve import ModelsConfig, resolve


@dataclass(frozen=True)
class OpenRequest:
    """What opening a model takes: the string, the environment (keys), the URLs given and the settings."""

    text: str
    """The model string as the user wrote it (an alias is resolved through :attr:`config`)."""
    environ: Mapping[str, str]
    """Where API keys (and a local model's cache directory) come from."""
    base_url: str | Sequence[str] | None
    """URLs given for it (a flag, a role's endpoint), over the config's."""
    config: ModelsConfig
    """``[models]`` of ``refinelab.toml``: aliases, per-endpoint settings."""
    cache: ResponseCache | None
    """The response cache, if any."""
    retry: RetryPolicy | None
    """How failed calls are retried (``None``: the default policy)."""

    @property
    def model(self) -> str:
        """The model string the alias (if any) stands for."""
        return self.config.model(self.text)


Ping = Callable[[Model], Awaitable[list[str]]]
"""A backend's own report for ``refinelab ping``: lines to print after it has answered one request."""


@dataclass(frozen=True)
class BackendKind:
    """How the models of one kind are opened, and what the rest of refinelab needs to know of them."""

    name: str
    """What the kind is called in messages (``served``, ``local``)."""
    open: Callable[[OpenRequest], Model]
    """Open a :class:`Model` for a request."""
    in_process: bool = False
    """The model runs in this process: it has no server, and an endpoint setting does not apply to it."""
    ping: Ping | None = None
    """Its own ``ping`` report (load time, speed, where it runs); ``None``: the served models' report."""


def open_model(
    text: str,
    environ: Mapping[str, str],
    *,
    base_url: str | Sequence[str] | None = None,
    config: ModelsConfig | None = None,
    cache: ResponseCache | None = None,
    retry: RetryPolicy | None = None,
) -> Model:
    """A :class:`Model` for a model string, with the config's concurrency and prices applied; with several
    base URLs, one model over all the replicas (``concurrency`` per replica); ``local:...`` runs the model
    in this process (its file is fetched into the cache on first use)."""
    request = OpenRequest(text, environ, base_url, config or ModelsConfig(), cache, retry)
    return backend_kind(text, request.config).open(request)


def backend_kind(text: str, config: ModelsConfig | None = None) -> BackendKind:
    """The kind of backend that runs ``text`` (after aliases): its prefix's record, else served."""
    prefix, _, name = (config or ModelsConfig()).model(text).partition(":")
    return BACKENDS.get(prefix, SERVED) if name else SERVED


def _open_served(request: OpenRequest) -> Model:
    """A model on an OpenAI-compatible server (one, or replicas behind one :class:`Model`)."""
    from refinelab.models._openai import OpenAIBackend
    from refinelab.models._replicas import ReplicaBackend

    spec = resolve(request.text, request.environ, base_url=request.base_url, config=request.config)
    settings = request.config.settings(request.text)
    concurrency = settings.concurrency or 16
    accepts = Accepts(profile_for(spec.model, settings.profile_overrides))  # one, shared by every replica
    backends = [OpenAIBackend(spec.model, url, spec.api_key, accepts=accepts) for url in spec.base_urls]
    backend: Backend = backends[0] if len(backends) == 1 else ReplicaBackend(backends, concurrency=concurrency)
    return _model(request, spec.model, backend, concurrency * len(backends))


def _open_local(request: OpenRequest) -> Model:
    """A model run in this process by llama.cpp; its options are the endpoint's settings, as data."""
    from refinelab.models._local import LocalBackend, LocalOptions
    from refinelab.models._local_files import resolve_local

    model = request.model
    if request.base_url is not None:
        raise UserError(f"model {model!r} runs in this process: --base-url does not apply to it")
    settings = request.config.settings(request.text)
    given = {k: v for k in ("context", "threads", "n_gpu_layers") if (v := getattr(settings, k)) is not None}
    options = replace(LocalOptions.from_environ(request.environ), sequences=settings.concurrency, **given)
    backend = LocalBackend(model, resolve_local(model.partition(":")[2], request.environ), options)
    backend.accepts = Accepts(profile_for(model, settings.profile_overrides))  # before the Model takes it
    return _model(request, model, backend, backend.sequences)


def _model(request: OpenRequest, model: str, backend: Backend, concurrency: int) -> Model:
    """The :class:`Model` over ``backend`` with the endpoint's price and deployment tag."""
    settings = request.config.settings(request.text)
    prices = PriceTable({model: settings.price} if settings.price else None)
    deployment = settings.deployment or ""
    return Model(
        backend, concurrency=concurrency, retry=request.retry, cache=request.cache, prices=prices, deployment=deployment
    )


async def _ping_local(model: Model) -> list[str]:
    from refinelab.models._local import ping_report

    return await ping_report(model)


SERVED = BackendKind("served", _open_served)
"""A model on an OpenAI-compatible server: every model string no record of :data:`BACKENDS` claims."""
BACKENDS: dict[str, BackendKind] = {
    "local": BackendKind("local", _open_local, in_process=True, ping=_ping_local),
}
"""The backends that are not a served model, by the provider prefix of the model strings they run."""
