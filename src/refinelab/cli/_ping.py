"""``refinelab ping MODEL``: send one small request and report what came back (checks a setup)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from refinelab.cli import _options
from refinelab.models import GenerateConfig, Message, open_model


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``ping``."""
    parser = commands.add_parser("ping", help="send one request to a model and report latency, usage and cost")
    parser.add_argument("model", help="openai:NAME, vllm:NAME, ollama:NAME, llamacpp:NAME, or NAME with --base-url")
    parser.add_argument("--base-url", help="any OpenAI-compatible server, e.g. http://localhost:8000/v1")
    _options.add_config(parser)
    parser.set_defaults(run=lambda args: run(args, environ))


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """One request; user errors (unreachable, no key, unknown model) propagate as one line, exit 2."""
    config = _options.settings(args, environ, ("config",)).models
    model = open_model(args.model, environ, base_url=args.base_url, config=config)
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
