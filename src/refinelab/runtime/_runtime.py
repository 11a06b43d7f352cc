"""The runtime builder: from :class:`Settings` to the opened pieces a command works with — models (over
one response cache, sharing one cap per endpoint), the sandbox and the store — closed in reverse order
when the block ends.

``run``, ``check``, ``solve``, ``report``, ``view``, ``recall-draft``, ``ping`` and the library entry
points behind them open everything here, so there is
one place for each choice: which backend serves a model string (:func:`refinelab.models.open_model`),
which sandbox to open (:func:`refinelab.sandbox.open_sandbox`), and where the store and caches live (the
settings). See docs/design/runtime.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace

from refinelab.errors import UserError
from refinelab.models import (
    EndpointLimits,
    Model,
    ResponseCache,
    backend_kind,
    check_effort,
    open_model,
    profile_for,
    resolve,
)
from refinelab.runtime._settings import Settings
from refinelab.sandbox import Sandbox, SandboxSettings, default_workers, open_sandbox
from refinelab.store import Store


class Runtime:
    """What one command opened from its settings; use through :func:`open_runtime`."""

    def __init__(self, settings: Settings, stack: AsyncExitStack, *, sandbox: Sandbox | None = None) -> None:
        self.settings = settings
        """The settings everything is opened from."""
        self._stack = stack
        self._given = sandbox
        self._limits = EndpointLimits()
        self._cache: ResponseCache | None = None
        self._models: dict[tuple[str, tuple[str, ...] | None, frozenset[str] | None, bool], Model] = {}
        self._store: Store | None = None
        self.sandboxes: list[Sandbox] = []
        """Every sandbox opened, in order (a command reports what happened to a cluster's nodes)."""

    def model(
        self,
        name: str,
        *,
        base_url: str | Sequence[str] | None = None,
        cached_from: Collection[str] | None = None,
        cache: bool = True,
    ) -> Model:
        """The model for a model string (an alias of the settings' ``[models]`` table included), over the
        response cache; one :class:`Model` per model string and server (or list of replicas: ``base_url``
        may name several), closed with the runtime. ``base_url`` is where a role's endpoint resolution
        (:func:`refinelab.models.choose_endpoint`) sent it, when a flag or a spec key chose it;
        ``cached_from``: take cached replies only from these endpoints (a fresh run's moved role);
        ``cache=False``: no response cache at all (``ping`` asks the server itself)."""
        urls = None if base_url is None else (base_url,) if isinstance(base_url, str) else tuple(base_url)
        sources = None if cached_from is None else frozenset(cached_from)
        key = (name, urls, sources, cache)
        if key not in self._models:
            self.check_model(name, base_url=base_url)  # before the response cache is made
            model = open_model(
                name,
                self.settings.model_environ,
                base_url=base_url,
                config=self.settings.models,
                cache=self._response_cache() if cache else None,
                retry=self.settings.retry,
            )
            model.limits = self._limits  # every model of one endpoint keeps one cap on requests in flight
            model.cached_from = sources
            self._stack.push_async_callback(model.aclose)
            self._models[key] = model
        return self._models[key]

    def check_model(
        self, name: str, *, base_url: str | Sequence[str] | None = None, efforts: Collection[str | None] = ()
    ) -> None:
        """The user error opening ``name`` would raise for a served model (no server named for it, its API
        key missing), or asking it for one of ``efforts`` would raise (a level its profile does not take),
        raised now, opening nothing: a command checks its models before it writes anything."""
        models = self.settings.models
        model = models.model(name)
        if not backend_kind(name, models).in_process:
            model = resolve(name, self.settings.model_environ, base_url=base_url, config=models).model
        profile = profile_for(model, models.settings(name).profile_overrides)  # as the opened model's
        for effort in efforts:
            check_effort(profile, model, effort)

    async def open_sandbox(self, request: SandboxSettings) -> Sandbox:
        """The sandbox ``request`` asks for, with the settings' worker count and cluster where it names
        none (this machine's pool, one worker per core, when neither does); stopped with the runtime. A
        sandbox handed to :func:`open_runtime` is returned instead, as it is (its opener stops it)."""
        if self._given is not None:
            self.sandboxes.append(self._given)
            return self._given
        workers = request.workers or self.settings.workers or default_workers()
        cluster = request.cluster or self.settings.cluster_address
        opened = open_sandbox(replace(request, workers=workers, cluster=cluster))
        sandbox = await self._stack.enter_async_context(opened)
        self.sandboxes.append(sandbox)
        return sandbox

    def open_store(self, *, create: bool = True) -> Store:
        """The store, closed with the runtime: created when it does not exist yet, or, with ``create=False``
        (the commands that read stored runs), a user error saying there is none."""
        if self._store is None:
            path = self.settings.store
            if not create and not path.is_file():
                raise UserError(f"{path}: no store here (run `refinelab run` first, or pass --store)")
            self._store = self._stack.enter_context(Store(path))
        return self._store

    def _response_cache(self) -> ResponseCache:
        if self._cache is None:
            self._cache = ResponseCache(self.settings.responses)
            self._stack.callback(self._cache.close)
        return self._cache


@asynccontextmanager
async def open_runtime(settings: Settings, *, sandbox: Sandbox | None = None) -> AsyncIterator[Runtime]:
    """A :class:`Runtime` for the block; everything it opened is closed when the block ends.

    ``sandbox``: one the caller built and opened (a :class:`~refinelab.sandbox.WorkerPool` with its own
    options, a :class:`~refinelab.sandbox.FakeSandbox`, a sandbox of its own kind), as an HTTP client takes a
    transport: every program of the block runs there instead of in one built from the settings, and the
    caller stops it. What a run records (its isolation, in the header) is then that sandbox's.
    """
    async with AsyncExitStack() as stack:
        yield Runtime(settings, stack, sandbox=sandbox)
