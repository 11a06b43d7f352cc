"""The model layer against a local OpenAI-compatible server, side by side with the bare SDK.

1. Concurrency: N calls to a server that answers after a fixed delay, 64 in flight; the wall time is
   compared with the ideal (calls x delay / 64). Target: within 10%.
2. Overhead: sequential calls to a server that answers at once, through ``Model.generate`` and through
   the bare ``openai`` client; the difference per call is the layer's own overhead. Target: <= 2 ms.

    python bench/model_layer.py [--calls 640] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import openai

from refinelab.models import Message, Model, RetryPolicy
from refinelab.models._openai import OpenAIBackend


async def concurrency(base_url: str, calls: int) -> float:
    model = Model(OpenAIBackend("vllm:bench", base_url, "EMPTY"), concurrency=64, retry=RetryPolicy(attempts=1))
    start = time.perf_counter()
    async with model:
        await asyncio.gather(*(model.generate([Message.user(f"q{i}")]) for i in range(calls)))
    return time.perf_counter() - start


async def bare_concurrency(base_url: str, calls: int) -> float:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
    semaphore = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        async with semaphore:
            await client.chat.completions.create(model="bench", messages=[{"role": "user", "content": f"b{i}"}])

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(calls)))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


async def overhead(base_url: str, calls: int) -> tuple[float, float]:
    model = Model(OpenAIBackend("vllm:bench", base_url, "EMPTY"), retry=RetryPolicy(attempts=1))
    client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
    timings = []
    for variant in ("sdk", "model", "sdk", "model"):
        start = time.perf_counter()
        for i in range(calls):
            if variant == "sdk":
                await client.chat.completions.create(model="bench", messages=[{"role": "user", "content": f"o{i}"}])
            else:
                await model.generate([Message.user(f"o{i}")])
        timings.append((variant, (time.perf_counter() - start) / calls))
    await client.close()
    await model.aclose()
    sdk = min(t for v, t in timings if v == "sdk")
    layer = min(t for v, t in timings if v == "model")
    return sdk, layer


@contextmanager
def server_process(delay: float) -> Iterator[str]:
    """The fake server in its own process, so it does not share this process's GIL."""
    launch = "from refinelab.testing._fake_server import main; main()"
    command = [sys.executable, "-c", launch, "--delay", str(delay)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=640)
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args()
    with server_process(args.delay) as url:
        wall = asyncio.run(concurrency(url, args.calls))
        bare = asyncio.run(bare_concurrency(url, args.calls))
    ideal = args.calls * args.delay / 64
    print(
        f"concurrency 64: {args.calls} calls x {args.delay * 1000:.0f} ms: Model {wall:.3f} s, "
        f"bare SDK {bare:.3f} s, ideal {ideal:.3f} s; Model/ideal {wall / ideal:.3f} (target <= 1.10), "
        f"Model/SDK {wall / bare:.3f}"
    )
    with server_process(0.0) as url:
        sdk, layer = asyncio.run(overhead(url, 300))
        print(
            f"per call: bare SDK {sdk * 1000:.2f} ms, Model {layer * 1000:.2f} ms, "
            f"overhead {(layer - sdk) * 1000:.2f} ms (target <= 2 ms)"
        )


if __name__ == "__main__":
    main()
