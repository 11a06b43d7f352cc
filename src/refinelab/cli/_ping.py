"""``refinelab ping MODEL``: send one small request and report what came back (checks a setup)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from typing import Any

from refinelab.cli import _options
from refinelab.models import (
    EndpointSetting,
    GenerateConfig,
    Message,
    ModelProfile,
    RoleEndpoint,
    backend_kind,
    choose_endpoint,
)
from refinelab.runtime import Settings, open_runtime


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``ping``."""
    parser = commands.add_parser("ping", help="send one request to a model and report latency, usage and cost")
    parser.add_argument(
        "model",
        help="openai:NAME, vllm:NAME, ollama:NAME, llamacpp:NAME, NAME with --base-url, or local:... (in-process "
        "llama.cpp: local:gemma-3-270m, local:PATH.gguf, local:OWNER/REPO/FILE.gguf)",
    )
    parser.add_argument("--base-url", help="any OpenAI-compatible server, e.g. http://localhost:8000/v1")
    _options.add_config(parser)
    parser.set_defaults(run=lambda args: run(args, environ))


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """One request; user errors (unreachable, no key, unknown model) propagate as one line, exit 2."""
    settings = _options.settings(args, environ, ("config",))
    endpoint = choose_endpoint(
        "actor", args.model, settings.models, over=[EndpointSetting(args.base_url, "--base-url")]
    )
    return asyncio.run(_ping(settings, endpoint))


async def _ping(settings: Settings, endpoint: RoleEndpoint) -> int:
    """The model opened through the runtime, without the response cache (the server itself must answer)."""
    async with open_runtime(settings) as runtime:
        model = runtime.model(endpoint.model, base_url=endpoint.base_url, cache=False)
        own = backend_kind(endpoint.model, settings.models).ping
        if own is not None:  # the backend's own report (a local model: load time, speed, where it runs)
            print("\n".join(await own(model)))
            return 0
        profile = model.accepts.profile
        # a reasoning model thinks before it answers: 8 tokens would all go to thinking and leave no answer
        cap = PING_THINKING_TOKENS if profile.reasons else 8
        completion = await model.generate(
            [Message.user("Reply with the single word: ok")], GenerateConfig(max_tokens=cap)
        )
    usage = completion.usage
    cost = "unknown" if completion.cost_usd is None else f"${completion.cost_usd:.6f}"
    estimated = " (estimated)" if usage.estimated else ""
    thought = f" ({usage.reasoning_tokens} thinking)" if usage.reasoning_tokens or profile.reasons else ""
    print(f"{completion.model} at {model.backend.endpoint} ({endpoint.chosen_by}): {completion.text.strip()!r}")
    print(
        f"latency {completion.latency_seconds * 1000:.0f} ms, tokens {usage.prompt_tokens} in / "
        f"{usage.completion_tokens} out{thought}{estimated}, cost {cost}, retries {len(completion.retries)}"
    )
    print(f"model profile {profile.name}: {_profile_text(profile)}")
    for item in completion.not_sent:
        print(f"not sent: {item} ({item.reason})")
    return 0


PING_THINKING_TOKENS = 512
"""The cap of a reasoning model's ping (thinking and answer together)."""


def _profile_text(profile: ModelProfile) -> str:
    """What the profile says, in a few words."""
    if not profile.reasons and profile.effort == "not_taken":
        return "no reasoning effort"
    refuses = f"; never sent: {', '.join(profile.refuses)}" if profile.refuses else ""
    return f"reasoning effort through {profile.effort}, cap as {profile.token_limit}{refuses}"
