"""llama.cpp through llama-cpp-python's low-level bindings (the C API as ctypes functions): a loaded model,
a context that decodes many sequences in one batch, and one sampler chain per sequence.

Why the C API rather than ``llama_cpp.Llama``: ``Llama`` decodes one sequence at a time; its batch, KV cache
and sampler belong to the object. Here the context holds up to ``sequences`` sequences, each in a KV stream
of its own (``kv_unified = false``), so a sequence's cells lie where they would if it were decoded alone and
attention never reads another sequence's cells. Everything else is set as ``Llama`` sets it (no flash
attention, a full-size sliding-window cache, batches of 512 tokens, llama-cpp-python's default threads and
sampler chain), except that every row of a batch is multiplied with the kernels a single row gets (weights
not repacked, llama.cpp's tiled K-quant product off: :func:`same_kernels_for_every_batch`), so a sequence gives
the tokens ``Llama`` gives with those settings, whatever else is decoded beside it. See docs/design/models.md
("Batched decoding").
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from refinelab.errors import EndpointError, MissingDependency, TransientError, UserError

BATCH = 512
"""Tokens per ``llama_decode`` of a prompt (``Llama``'s ``n_batch``), and llama.cpp's micro-batch."""
Logits = npt.NDArray[np.float32]


UNPACKED = False
"""``use_extra_bufts`` for every model the engine loads: weights kept as stored, not repacked for the CPU.
Repacked K-quants are multiplied by one kernel for batches of four rows and more and by another for fewer."""
KERNEL_SWITCHES = {"GGML_CPU_TILED_MM": "0"}
"""llama.cpp's CPU switches the engine sets (unless the environment already does): its tiled K-quant matrix
product, taken for batches of eight rows and more, rounds otherwise than the product for fewer rows."""


def same_kernels_for_every_batch() -> None:
    """Make llama.cpp multiply every row of a batch with the kernel a single row gets, so a sequence's logits
    do not depend on how many sequences share its batch (with :data:`UNPACKED` weights; measured by
    ``bench/local_batching.py --determinism``: docs/design/models.md, "What is reproducible"). llama.cpp reads
    the switches once, at its first matrix product in the process."""
    for name, value in KERNEL_SWITCHES.items():
        os.environ.setdefault(name, value)


def reference_llama(path: Path, **settings: Any) -> Any:
    """``llama_cpp.Llama`` on ``path`` with the kernels the engine uses (weights loaded as stored, which
    ``Llama`` has no argument for: its default model parameters are swapped for the call): what the engine's
    output is compared with in the tests and the benchmarks."""
    import llama_cpp
    import llama_cpp.llama_cpp as low

    same_kernels_for_every_batch()
    default = low.llama_model_default_params

    def stored() -> Any:
        params = default()
        params.use_extra_bufts = UNPACKED
        return params

    low.llama_model_default_params = stored
    try:
        return llama_cpp.Llama(str(path), **settings)
    finally:
        low.llama_model_default_params = default


def import_llama_cpp() -> Any:
    """``llama_cpp``, or a user error naming the extra."""
    try:
        import llama_cpp
    except ImportError:
        raise MissingDependency(
            "local models need llama-cpp-python: pip install 'refinelab[local]' (it compiles llama.cpp, about 20 "
            "minutes; bash scripts/local-wheel.sh builds it once into a shared wheel cache)"
        ) from None
    return llama_cpp


def gpu_offload_available() -> bool:
    """Whether this llama.cpp was built with a GPU backend (False without llama-cpp-python)."""
    try:
        import llama_cpp
    except ImportError:
        return False
    return bool(llama_cpp.llama_supports_gpu_offload())


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 while llama.cpp loads: some of its notes bypass llama-cpp-python's logger and
    would land in the middle of a progress bar. Failures still arrive, as return values."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no stderr to silence (closed, or replaced by None)
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@dataclass(frozen=True)
class Placement:
    """Where a loaded model runs."""

    gpu_layers: int
    """Layers whose weights are on the GPU (the output layer counts as one)."""
    layers: int
    """Layers that could be offloaded (the model's blocks and its output layer)."""
    gpu_backend: bool
    """Whether llama.cpp was built with a GPU backend."""

    def describe(self) -> str:
        """One phrase for ``ping``: on the CPU, on the GPU, or split between them."""
        if not self.gpu_backend:
            return "on the CPU (this llama.cpp has no GPU backend)"
        if self.gpu_layers == 0:
            return "on the CPU (n_gpu_layers = 0)"
        if self.gpu_layers >= self.layers:
            return f"on the GPU (all {self.layers} layers offloaded)"
        return f"on the GPU and the CPU ({self.gpu_layers} of {self.layers} layers offloaded)"


@dataclass(frozen=True)
class Sampling:
    """How one sequence picks its tokens: llama-cpp-python's chain (``Llama._init_sampler``) and defaults."""

    temperature: float = 0.2
    """0: greedy."""
    top_p: float = 0.95
    """Nucleus sampling."""
    seed: int | None = None
    """The chain's seed; ``None``: a random one."""
    grammar: str | None = None
    """A GBNF grammar the output must follow (structured output)."""
    top_k: int = 40
    """llama-cpp-python always applies it (an OpenAI-compatible server may not)."""
    min_p: float = 0.05
    """Likewise."""


class LoadedModel:
    """A GGUF loaded by llama.cpp: its weights (mapped), vocabulary and metadata."""

    def __init__(self, path: Path, n_gpu_layers: int) -> None:
        self.llama_cpp = llama_cpp = import_llama_cpp()
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)  # llama.cpp's load chatter, not ours
        same_kernels_for_every_batch()
        params = llama_cpp.llama_model_default_params()
        params.n_gpu_layers = n_gpu_layers
        params.use_extra_bufts = UNPACKED
        with quiet_stderr():
            llama_cpp.llama_backend_init()
            self.model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        if not self.model:
            raise UserError(
                f"llama.cpp could not load {path}: is it a GGUF model this llama-cpp-python supports, and is there "
                "memory for it?"
            )
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.eos, self.bos = int(llama_cpp.llama_vocab_eos(self.vocab)), int(llama_cpp.llama_vocab_bos(self.vocab))
        layers = int(llama_cpp.llama_model_n_layer(self.model)) + 1
        offloaded = min(layers if n_gpu_layers < 0 else n_gpu_layers, layers)
        gpu = gpu_offload_available()
        self.placement = Placement(offloaded if gpu else 0, layers, gpu)
        """Where it runs."""
        self._pieces: dict[int, bytes] = {}
        self._ends: dict[int, bool] = {}

    def tokenize(self, text: str) -> list[int]:
        """A formatted prompt's tokens: special tokens parsed, no BOS added (the template writes it)."""
        data, room = text.encode(), len(text) + 16
        while True:
            tokens = (ctypes.c_int32 * room)()
            arguments = (self.vocab, data, len(data), tokens, room, False, True)  # the C function's, in order
            count = int(self.llama_cpp.llama_tokenize(*arguments))
            if count >= 0:
                return list(tokens[:count])
            if -count <= room:
                raise EndpointError(f"llama.cpp could not tokenize a prompt of {len(data)} bytes")
            room = -count

    def piece(self, token: int) -> bytes:
        """A generated token's text (special tokens as nothing, as llama-cpp-python detokenizes)."""
        found = self._pieces.get(token)
        if found is None:
            found = self._pieces[token] = self._text(token, special=False)
        return found

    def token_text(self, token: int) -> str:
        """A token's text in the vocabulary (``<bos>``), for the chat template; "" for no token."""
        return bytes(self.llama_cpp.llama_vocab_get_text(self.vocab, token)).decode() if token >= 0 else ""

    def ends(self, token: int) -> bool:
        """Whether the token ends generation (end of sequence, end of turn...)."""
        found = self._ends.get(token)
        if found is None:
            found = self._ends[token] = bool(self.llama_cpp.llama_vocab_is_eog(self.vocab, token))
        return found

    def metadata(self, key: str) -> str | None:
        """A GGUF metadata value as text, ``None`` when absent."""
        size = 1 << 16
        while True:
            buffer = ctypes.create_string_buffer(size)
            length = int(self.llama_cpp.llama_model_meta_val_str(self.model, key.encode(), buffer, size))
            if length < 0:
                return None
            if length < size:
                return buffer.value.decode(errors="replace")
            size = length + 1

    def kv_bytes_per_token(self) -> int:
        """The KV cache's size per token and sequence (16-bit keys and values in every layer), from the
        GGUF's metadata; an upper bound (a sliding-window layer keeps a full-size cache here too)."""
        arch = self.metadata("general.architecture") or ""
        read = {key: self.metadata(f"{arch}.{key}") for key in ("block_count", "attention.head_count_kv")}
        heads = int(read["attention.head_count_kv"] or 1)
        width = self.metadata(f"{arch}.attention.key_length"), self.metadata(f"{arch}.attention.value_length")
        embedding = int(self.llama_cpp.llama_model_n_embd(self.model))
        head = int(self.llama_cpp.llama_model_n_head(self.model)) or 1
        key, value = (int(w) if w else embedding // head for w in width)
        return int(read["block_count"] or 1) * heads * (key + value) * 2

    def close(self) -> None:
        """Free the weights."""
        if self.model:
            self.llama_cpp.llama_model_free(self.model)
            self.model = None

    def _text(self, token: int, *, special: bool) -> bytes:
        size = 64
        while True:
            buffer = ctypes.create_string_buffer(size)
            length = int(self.llama_cpp.llama_token_to_piece(self.vocab, token, buffer, size, 0, special))
            if length >= 0:
                return buffer.raw[:length]
            size = -length


class ChatTemplate:
    """A conversation as the model's prompt: the GGUF's Jinja chat template (or the named default's), through
    the same ``Jinja2ChatFormatter`` llama-cpp-python builds from it."""

    def __init__(self, model: LoadedModel, template: str | None, path: Path) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = template or model.metadata("tokenizer.chat_template")
        if not template:
            raise UserError(
                f"{path} carries no chat template (tokenizer.chat_template), so the conversation cannot be "
                "formatted for it: use a GGUF converted with its template"
            )
        eos, bos = model.token_text(model.eos), model.token_text(model.bos)
        self._formatter: Any = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self.stop: tuple[str, ...] = (eos,) if eos else ()
        """Stop sequences every request gets after its own (llama-cpp-python adds the end-of-sequence text)."""

    def render(self, messages: Sequence[dict[str, str]], **variables: object) -> str:
        """The prompt for ``messages``; ``variables`` reach the template (a template's own switches)."""
        return str(self._formatter(messages=list(messages), **variables).prompt)


@dataclass(frozen=True)
class Row:
    """One token of a batch."""

    sequence: int
    """The sequence it belongs to (its slot)."""
    token: int
    """The token."""
    position: int
    """Its position in the sequence."""


class BatchContext:
    """A llama.cpp context holding ``sequences`` sequences of up to ``context`` tokens each, one KV stream a
    sequence; sequence ``i`` is llama.cpp's sequence id ``i``."""

    def __init__(self, model: LoadedModel, context: int, sequences: int, threads: int | None) -> None:
        self.model, self.llama_cpp = model, model.llama_cpp
        llama_cpp, params = model.llama_cpp, model.llama_cpp.llama_context_default_params()
        params.n_seq_max, params.kv_unified, params.swa_full = sequences, False, True
        params.n_ctx = _padded(context) * sequences
        params.n_batch = params.n_ubatch = BATCH
        # llama-cpp-python's defaults: half the CPUs generate (the other half run the tests), all evaluate a
        # prompt; a step of several sequences is a batch to llama.cpp, so it is told the generating threads
        self._generating = params.n_threads = threads or max((os.cpu_count() or 2) // 2, 1)
        self._evaluating = params.n_threads_batch = threads or os.cpu_count() or 1
        self._batch_threads = self._evaluating
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED  # as Llama(flash_attn=False)
        with quiet_stderr():
            self.ctx = llama_cpp.llama_init_from_model(model.model, params)
        if not self.ctx:
            raise UserError(f"llama.cpp could not make a context for {sequences} sequences of {context} tokens")
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.per_sequence = int(llama_cpp.llama_n_ctx_seq(self.ctx))
        """Tokens one sequence may hold (its prompt and completion)."""
        self._batch = llama_cpp.llama_batch_init(max(BATCH, sequences), 0, 1)

    def prefill(self, seq: int, tokens: Sequence[int], stop: Callable[[], bool] = lambda: False) -> Logits | None:
        """Evaluate a prompt into sequence ``seq`` (in batches of :data:`BATCH`, as ``Llama`` does); the
        logits after its last token, or ``None`` when ``stop`` says so between two batches (a long prompt's
        request cancelled while it is evaluated)."""
        self._threads_for_batches(self._evaluating)
        for start in range(0, len(tokens), BATCH):
            if start and stop():
                return None
            chunk = tokens[start : start + BATCH]
            rows = [Row(seq, token, start + i) for i, token in enumerate(chunk)]
            self._decode(rows, outputs=start + len(chunk) == len(tokens))
        kept: Logits = self.logits(len(rows) - 1).copy()
        return kept

    def decode(self, rows: Sequence[Row]) -> None:
        """One token for each of several sequences; logits for every row."""
        self._threads_for_batches(self._generating)
        self._decode(rows, outputs=None)

    def logits(self, row: int) -> Logits:
        """The logits of a row of the last batch (a view into llama.cpp's buffer: copy to keep)."""
        pointer = self.llama_cpp.llama_get_logits_ith(self.ctx, row)
        logits: Logits = np.ctypeslib.as_array(pointer, shape=(self.model.n_vocab,))
        return logits

    def share(self, source: int, target: int, keep: int) -> None:
        """Give sequence ``target`` the first ``keep`` positions of ``source`` (its prompt): llama.cpp copies
        the stream at the next decode, before that decode writes anything."""
        self.llama_cpp.llama_memory_seq_cp(self.memory, source, target, -1, -1)
        self.llama_cpp.llama_memory_seq_rm(self.memory, target, keep, -1)

    def drop(self, seq: int) -> None:
        """Forget a sequence (its stream is free for the next)."""
        self.llama_cpp.llama_memory_seq_rm(self.memory, seq, -1, -1)

    def close(self) -> None:
        """Free the context and its batch."""
        if self.ctx:
            self.llama_cpp.llama_batch_free(self._batch)
            self.llama_cpp.llama_free(self.ctx)
            self.ctx = None

    def _threads_for_batches(self, threads: int) -> None:
        if threads != self._batch_threads:
            self.llama_cpp.llama_set_n_threads(self.ctx, self._generating, threads)
            self._batch_threads = threads

    def _decode(self, rows: Sequence[Row], *, outputs: bool | None) -> None:
        batch = self._batch
        for i, row in enumerate(rows):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = row.token, row.position, 1
            batch.seq_id[i][0] = row.sequence
            batch.logits[i] = outputs is None or (outputs and i == len(rows) - 1)
        batch.n_tokens = len(rows)
        status = int(self.llama_cpp.llama_decode(self.ctx, batch))
        if status != 0:
            for seq in {row.sequence for row in rows}:
                self.drop(seq)  # what the failed batch wrote is in doubt
            raise TransientError(f"llama.cpp: llama_decode returned {status}")


class SamplerChain:
    """One sequence's sampler chain, built as ``Llama._init_sampler`` builds it (neutral repetition penalties,
    the grammar, then greedy, or top-k, typical, top-p, min-p, temperature and a seeded draw). Plain greedy
    decoding (no grammar) needs no chain: the first of the highest logits is the greedy sampler's pick, read
    without copying the vocabulary into a candidate list each token."""

    def __init__(self, model: LoadedModel, sampling: Sampling) -> None:
        self.llama_cpp = llama_cpp = model.llama_cpp
        self.chain: Any = None
        self.greedy = sampling.temperature == 0.0 and sampling.grammar is None
        """Whether the next token is simply the first of the highest logits."""
        if self.greedy:
            return
        self.chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        self._add(llama_cpp.llama_sampler_init_penalties(model.n_vocab, 64, 1.0, 0.0, 0.0))
        if sampling.grammar is not None:
            grammar = llama_cpp.llama_sampler_init_grammar(model.vocab, sampling.grammar.encode(), b"root")
            if not grammar:
                self.close()
                raise EndpointError("llama.cpp rejected the grammar made from the JSON schema")
            self._add(grammar)
        if sampling.temperature == 0.0:
            self._add(llama_cpp.llama_sampler_init_greedy())
            return
        self._add(llama_cpp.llama_sampler_init_top_k(sampling.top_k))
        self._add(llama_cpp.llama_sampler_init_typical(1.0, 1))
        self._add(llama_cpp.llama_sampler_init_top_p(sampling.top_p, 1))
        self._add(llama_cpp.llama_sampler_init_min_p(sampling.min_p, 1))
        self._add(llama_cpp.llama_sampler_init_temp(sampling.temperature))
        seed = llama_cpp.LLAMA_DEFAULT_SEED if sampling.seed is None else _seed32(sampling.seed)
        self._add(llama_cpp.llama_sampler_init_dist(seed))

    def sample(self, context: BatchContext, row: int) -> int:
        """The next token from a row of the context's last batch."""
        if self.greedy:
            return int(np.argmax(context.logits(row)))
        return int(self.llama_cpp.llama_sampler_sample(self.chain, context.ctx, row))

    def sample_from(self, logits: Logits) -> int:
        """The next token from kept logits (a prompt's, shared by its samples), as :meth:`sample` would
        pick it from the same logits."""
        if self.greedy:
            return int(np.argmax(logits))
        llama_cpp = self.llama_cpp
        candidates = np.zeros(len(logits), dtype=[("id", np.int32), ("logit", np.float32), ("p", np.float32)])
        candidates["id"] = np.arange(len(logits), dtype=np.int32)
        candidates["logit"] = logits
        pointer = ctypes.cast(candidates.ctypes.data, llama_cpp.llama_token_data_p)
        array = llama_cpp.llama_token_data_array(pointer, len(logits), -1, False)
        llama_cpp.llama_sampler_apply(self.chain, ctypes.byref(array))
        token = int(array.data[array.selected].id)  # a sampler may point ``data`` elsewhere
        llama_cpp.llama_sampler_accept(self.chain, token)
        return token

    def close(self) -> None:
        """Free the chain and its samplers."""
        if self.chain:
            self.llama_cpp.llama_sampler_free(self.chain)
            self.chain = None

    def _add(self, sampler: Any) -> None:
        self.llama_cpp.llama_sampler_chain_add(self.chain, sampler)


def _seed32(seed: int) -> int:
    """A seed as llama.cpp's 32 bits, never 0xFFFFFFFF (``LLAMA_DEFAULT_SEED``: a random seed at every draw, so
    a seeded request would not be reproducible); a seed from 0 to 0xFFFFFFFE is itself."""
    return seed % 0xFFFFFFFF


def _padded(context: int) -> int:
    """llama.cpp's context size for a requested one (it rounds up to a multiple of 256)."""
    return -(-context // 256) * 256
