"""The runtime builder: from :class:`Settings` to the opened pieces a command works with — models (over
one response cache, sharing one cap per endpoint), the sandbox and the store — closed in reverse order
when the block ends.

``run``, ``check``, ``solve`` and the library entry points behind them open everything here, so there is
one place for each choice: which backend serves a model string (:func:`refinelab.models.open_model`),
which sandbox to open (:func:`refinelab.sandbox.open_sandbox`), and where the store and caches live (the
settings). See docs/design/runtime.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace

from refinelab.models import EndpointLimits, Model, ResponseCache, open_model
from refinelab.runtime._settings import Settings
from refinelab.sandbox import Sandbox, SandboxSettings, default_workers, open_sandbox
from refinelab.store import Store


class Runtime:
    """What one command opened from its settings; use through :func:`open_runtime`."""

    def __init__(self, settings: Settings, stack: AsyncExitStack) -> None:
        self.settings = settings
        """The settings everything is opened from."""
        self._stack = stack
        self._limits = EndpointLimits()
        self._cache: ResponseCache | None = None
        self._models: dict[tuple[str, str | None], Model] = {}
        self._store: Store | None = None

    def model(self, name: str, *, base_url: str | None = None) -> Model:
        """The model for a model string (an alias of the settings' ``[models]`` table included), over the
        response cache; one :class:`Model` per model string and server, closed with the runtime."""
        key = (name, base_url)
        if key not in self._models:
            model = open_model(
                name,
                self.settings.model_environ,
                base_url=base_url,
                config=self.settings.models,
                cache=self._response_cache(),
                retry=self.settings.retry,
            )
            model.limits = self._limits  # every model of one endpoint keeps one cap on requests in flight
            self._stack.push_async_callback(model.aclose)
            self._models[key] = model
        return self._models[key]

    async def open_sandbox(self, request: SandboxSettings) -> Sandbox:
        """The sandbox ``request`` asks for, with the settings' worker count where it names none (one per
        core when neither does); stopped with the runtime."""
        workers = request.workers or self.settings.workers or default_workers()
        return await self._stack.enter_async_context(open_sandbox(replace(request, workers=workers)))

    def open_store(self) -> Store:
        """The store (created when it does not exist yet), closed with the runtime."""
        if self._store is None:
            self._store = self._stack.enter_context(Store(self.settings.store))
        return self._store

    def _response_cache(self) -> ResponseCache:
        if self._cache is None:
            self._cache = ResponseCache(self.settings.responses)
            self._stack.callback(self._cache.close)
        return self._cache


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """A :class:`Runtime` for the block; everything it opened is closed when the block ends."""
    async with AsyncExitStack() as stack:
        yield Runtime(settings, stack)
