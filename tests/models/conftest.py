"""The HTTP tests run under both clients the OpenAI-compatible backend may sit on: the SDK's aiohttp one
(what refinelab installs) and its httpx one (what an install without aiohttp gets), so the same faults
read the same way on both. A module opts in with ``pytestmark = pytest.mark.usefixtures("http_client")``."""

from __future__ import annotations

import importlib.util

import pytest

from refinelab.models import _openai


@pytest.fixture(params=["aiohttp", "httpx"])
def http_client(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which HTTP client the backend uses in this test."""
    if request.param == "httpx":
        monkeypatch.setattr(_openai, "_transport", lambda openai, timeout: None)
    elif importlib.util.find_spec("aiohttp") is None:
        pytest.skip("aiohttp is not installed (refinelab depends on openai[aiohttp])")
    return str(request.param)
