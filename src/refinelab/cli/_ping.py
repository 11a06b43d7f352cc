"""``refinelab ping MODEL``: send one small request and report what came back (checks a setup)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from typing import Any

from refinelab.cli import _options
from refinelab.models import Completion, GenerateConfig, LocalBackend, Message, Model, open_model


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
    model = open_model(args.model, settings.model_environ, base_url=args.base_url, config=settings.models)
    if isinstance(model.backend, LocalBackend):
        return _ping_local(model, model.backend)
    completion = model.generate_sync([Message.user("Reply with the single word: ok")], GenerateConfig(max_tokens=8))
    usage = completion.usage
    cost = "unknown" if completion.cost_usd is None else f"${completion.cost_usd:.6f}"
    estimated = " (estimated)" if usage.estimated else ""
    print(f"{completion.model} at {model.backend.endpoint}: {completion.text.strip()!r}")
    print(
        f"latency {completion.latency_seconds * 1000:.0f} ms, tokens {usage.prompt_tokens} in / "
        f"{usage.completion_tokens} out{estimated}, cost {cost}, retries {len(completion.retries)}"
    )
    return 0


def _ping_local(model: Model, backend: LocalBackend) -> int:
    """Load the model (timed), then generate up to 64 tokens greedily and report the model's speed."""

    async def once() -> tuple[float, Completion]:
        async with model:
            loaded = await backend.load()
            prompt = [Message.user("Count from 1 to 100, separated by spaces.")]
            return loaded, await model.generate(prompt, GenerateConfig(temperature=0.0, max_tokens=64))

    loaded, completion = asyncio.run(once())
    usage, seconds = completion.usage, completion.latency_seconds
    size = backend.file.path.stat().st_size / 1e6
    where = backend.placement.describe() if backend.placement is not None else "not loaded"
    print(f"{completion.model}: {completion.text.strip()[:60]!r}")
    print(f"{backend.endpoint}, {size:.0f} MB, sha256 {backend.file.sha256[:12]}")
    print(f"runs {where}; up to {backend.sequences} sequences decoded together")
    print(
        f"loaded in {loaded:.2f} s; {usage.completion_tokens} tokens in {seconds:.2f} s = "
        f"{usage.completion_tokens / seconds:.1f} tokens/s (prompt {usage.prompt_tokens} tokens)"
    )
    return 0
