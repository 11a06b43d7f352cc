"""The local engine: one thread per loaded model that decodes every sequence in flight together, one token
each per ``llama_decode``, as a server with parallel slots does (continuous batching).

A job (one sample) waits in a first-in first-out queue until a sequence slot is free; it is admitted with its
prompt evaluated, or, when another sequence in flight has the same prompt (the other samples of a request),
with that sequence's prompt copied in llama.cpp's KV cache and the logits kept from its evaluation, so a
prompt is evaluated once for all its samples. Then every step decodes the last token of every sequence in
one batch and each sequence's own sampler chain picks its next token; a finished sequence frees its slot at
once for the next job. A cancelled job leaves the queue, its prompt's evaluation between two batches, or its
slot at the next step. The event loop never waits on the model: llama.cpp releases the GIL while it computes.
See docs/design/models.md ("Batched decoding", and what is and is not reproducible).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from refinelab.errors import EndpointError, TransientError
from refinelab.models._local_llama import BatchContext, ChatTemplate, LoadedModel, Logits, Row, SamplerChain, Sampling
from refinelab.models._local_text import CompletionText
from refinelab.models._memory import check_fits, sequences_that_fit


@dataclass(frozen=True)
class Job:
    """One sample to generate."""

    prompt: str
    """The formatted prompt."""
    sampling: Sampling
    """How its tokens are picked."""
    max_tokens: int
    """The cap on its completion (lowered to what the context leaves after the prompt)."""
    stop: tuple[str, ...] = ()
    """Stop sequences, in order."""
    full_is_length: bool = False
    """A prompt that fills the context ends the job at ``length`` with nothing generated, instead of being a
    user error (a thinking plan's answer, after thinking that filled the context)."""


@dataclass(frozen=True)
class Outcome:
    """A finished job."""

    text: str
    """The completion's text."""
    prompt_tokens: int
    """The prompt's tokens, as the model's tokenizer counts them."""
    completion_tokens: int
    """Tokens generated (an end-of-generation token is not counted)."""
    finish_reason: str
    """``stop`` or ``length``."""
    seconds: float
    """From the job's admission into the batch to its last token: time queued for a slot is not in it."""


@dataclass(frozen=True)
class EngineOptions:
    """How the engine loads its model and how many sequences it decodes together."""

    context: int
    """Tokens one sequence may hold (prompt and completion)."""
    threads: int | None
    """Threads that decode (``None``: llama-cpp-python's defaults)."""
    n_gpu_layers: int
    """Layers offloaded to a GPU (-1: all)."""
    sequences: int
    """Sequences decoded together, at most."""
    sequences_given: bool = False
    """Whether the user set ``sequences`` (then too many for the memory is an error, not a smaller number)."""


@dataclass(eq=False)
class Ticket:
    """A submitted job: its outcome, and how to cancel it."""

    job: Job
    """What to generate."""
    future: concurrent.futures.Future[Outcome] = field(default_factory=concurrent.futures.Future)
    """Resolves with the outcome."""
    cancelled: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        """A queued job never starts; a running one stops at the next step."""
        self.cancelled.set()
        self.future.cancel()


@dataclass(eq=False)
class _Running:
    """A job in a slot."""

    ticket: Ticket
    slot: int
    prompt: tuple[int, ...]
    sampler: SamplerChain
    text: CompletionText
    started: float


@dataclass(eq=False)
class _Prompt:
    """A prompt in the KV cache of the sequences in ``holders``, and the logits after it."""

    logits: Logits
    holders: set[int] = field(default_factory=set)


class Engine:
    """A loaded GGUF and the thread that decodes its sequences."""

    def __init__(self, path: Path, template: str | None, options: EngineOptions) -> None:
        self.path, self.options = path, options
        self.load_seconds: float | None = None
        """How long loading took, once loaded."""
        self.model: LoadedModel | None = None
        """The loaded model (in the engine's thread)."""
        self.template: ChatTemplate | None = None
        """The chat template, once loaded."""
        self.sequences = options.sequences
        """Sequences decoded together (fewer than asked when memory allows no more)."""
        self._template_text = template
        self._queue: deque[Ticket] = deque()
        self._wake = threading.Condition()
        self._loaded: concurrent.futures.Future[float] | None = None
        self._closing = self._stopped = False
        self._thread: threading.Thread | None = None
        self._context: BatchContext | None = None
        self._slots: list[_Running | None] = []
        self._prompts: dict[tuple[int, ...], _Prompt] = {}
        _ENGINES.add(self)

    def ready(self) -> concurrent.futures.Future[float]:
        """Start the engine's thread, which loads the model, unless it runs; resolves with the load time."""
        with self._wake:
            return self._start()

    def submit(self, jobs: list[Job]) -> list[Ticket]:
        """Queue jobs (first in, first out); each ticket's future resolves with its outcome."""
        tickets = [Ticket(job) for job in jobs]
        with self._wake:
            self._start()
            self._queue.extend(tickets)
            self._wake.notify()
        return tickets

    def close(self, timeout: float = 30.0) -> None:
        """Stop after the current step, fail what is left, free the model (at exit: llama.cpp must not be
        computing while the process tears it down)."""
        with self._wake:
            self._closing = True
            self._wake.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _start(self) -> concurrent.futures.Future[float]:
        """(Under the lock.) A thread that loads the model and decodes, unless one runs: the first request,
        and the next after a failed load or a failure in the thread, start one."""
        if self._loaded is None or self._stopped:
            self._loaded, self._stopped, self._closing = concurrent.futures.Future(), False, False
            self._thread = threading.Thread(target=self._run, args=(self._loaded,), name="refinelab-llama", daemon=True)
            self._thread.start()
        return self._loaded

    def _run(self, loaded: concurrent.futures.Future[float]) -> None:
        try:
            started = time.perf_counter()
            self._load()
            self.load_seconds = time.perf_counter() - started
        except BaseException as exc:  # noqa: BLE001 - every waiting caller gets it (a user error, most often)
            loaded.set_exception(exc)
            self._stop(exc)
            return
        loaded.set_result(self.load_seconds)
        error: BaseException = EndpointError(f"local:{self.path.name}: the model was closed")
        try:
            while self._work_to_do():
                self._admit_waiting()
                if any(self._slots):
                    self._step()
        except BaseException as exc:  # noqa: BLE001 - a bug: the jobs get it (traceback and all), and the next
            error = exc  # request starts a new thread
        finally:
            self._stop(error)

    def _load(self) -> None:
        options = self.options
        check_fits(self.path, options.context)
        self.model = model = LoadedModel(self.path, options.n_gpu_layers)
        try:
            self.template = ChatTemplate(model, self._template_text, self.path)
            kv_bytes = model.kv_bytes_per_token() * options.context
            self.sequences = sequences_that_fit(self.path, kv_bytes, options.sequences, given=options.sequences_given)
            self._context = BatchContext(model, options.context, self.sequences, options.threads)
        except BaseException:
            model.close()
            self.model = None
            raise
        self._slots = [None] * self.sequences

    def _work_to_do(self) -> bool:
        """Wait until there is something to decode or admit; False once closing."""
        with self._wake:
            while not self._closing and not self._queue and not any(self._slots):
                self._wake.wait()
            return not self._closing

    def _admit_waiting(self) -> None:
        while True:
            with self._wake:
                free = [slot for slot, running in enumerate(self._slots) if running is None]
                if not free or not self._queue:
                    return
                ticket = self._queue.popleft()
            if ticket.future.set_running_or_notify_cancel():
                self._admit(ticket, free[0])

    def _admit(self, ticket: Ticket, slot: int) -> None:
        """Start a job in a free slot: its prompt evaluated, or copied from a sequence that holds it."""
        started = time.perf_counter()
        try:
            running = self._prepare(ticket, slot, started)
        except Exception as exc:  # noqa: BLE001 - the job's caller gets it (a prompt too long, a bad grammar)
            _settle(ticket.future, exc)
            return
        if isinstance(running, Outcome):  # no room in the context, and the job ends there
            _settle(ticket.future, running)
            return
        try:
            prompt = self._prompt_into(slot, running.prompt, ticket)
        except Exception as exc:  # noqa: BLE001 - likewise (llama_decode failed: the caller retries)
            running.sampler.close()
            _settle(ticket.future, exc)
            return
        if prompt is None:  # cancelled (or the engine closing) while its prompt was evaluated
            running.sampler.close()
            _settle(ticket.future, concurrent.futures.CancelledError())
            return
        prompt.holders.add(slot)
        self._slots[slot] = running
        self._push(running, running.sampler.sample_from(prompt.logits))

    def _prepare(self, ticket: Ticket, slot: int, started: float) -> _Running | Outcome:
        model, context, job = self.model, self._context, ticket.job
        assert model is not None and context is not None
        tokens = tuple(model.tokenize(job.prompt))
        if len(tokens) >= self.options.context and job.full_is_length:
            return Outcome("", len(tokens), 0, "length", 0.0)
        if len(tokens) >= self.options.context:
            raise EndpointError(
                f"local:{self.path.name}: a prompt of {len(tokens)} tokens does not fit the context of "
                f"{self.options.context}: set the model's context higher (context in refinelab.toml, or "
                "REFINELAB_LOCAL_CONTEXT)"
            )
        room = context.per_sequence - len(tokens)  # llama-cpp-python's cap: the prompt and the completion fit
        limit = job.max_tokens if job.max_tokens + len(tokens) < context.per_sequence else room
        text = CompletionText(limit, [s.encode() for s in job.stop])
        return _Running(ticket, slot, tokens, SamplerChain(model, job.sampling), text, started)

    def _prompt_into(self, slot: int, tokens: tuple[int, ...], ticket: Ticket) -> _Prompt | None:
        """The prompt in ``slot``: copied from a sequence that holds it, else evaluated (``None``: the job was
        cancelled, or the engine is closing, before all of it was, so Ctrl-C does not wait for a long one)."""
        context = self._context
        assert context is not None
        known = self._prompts.get(tokens)
        if known is not None:
            context.share(next(iter(known.holders)), slot, len(tokens))
            return known
        try:
            logits = context.prefill(slot, tokens, stop=lambda: self._closing or ticket.cancelled.is_set())
        except TransientError:
            context.drop(slot)
            raise
        if logits is None:
            context.drop(slot)
            return None
        self._prompts[tokens] = found = _Prompt(logits)
        return found

    def _step(self) -> None:
        """One token for every sequence in flight, in one batch."""
        context = self._context
        assert context is not None
        for running in [r for r in self._slots if r is not None]:
            if running.ticket.cancelled.is_set():
                self._release(running)
                _settle(running.ticket.future, concurrent.futures.CancelledError())
            elif len(running.prompt) + len(running.text.tokens) >= context.per_sequence:
                running.text.end("length")  # the context is full (llama-cpp-python would fail here)
                self._finish(running)
        batch = [r for r in self._slots if r is not None]
        if not batch:
            return
        rows = [Row(r.slot, r.text.tokens[-1], len(r.prompt) + len(r.text.tokens) - 1) for r in batch]
        try:
            context.decode(rows)
        except TransientError as exc:
            for running in batch:
                self._release(running)
                _settle(running.ticket.future, exc)
            return
        for row, running in enumerate(batch):
            self._push(running, running.sampler.sample(context, row))

    def _push(self, running: _Running, token: int) -> None:
        model = self.model
        assert model is not None
        if running.text.push(token, model.piece(token), end_of_generation=model.ends(token)):
            self._finish(running)

    def _finish(self, running: _Running) -> None:
        text = running.text
        outcome = Outcome(
            text.reply,
            len(running.prompt),
            len(text.tokens),
            text.finish_reason or "stop",
            time.perf_counter() - running.started,
        )
        self._release(running)
        _settle(running.ticket.future, outcome)

    def _release(self, running: _Running) -> None:
        """Free the slot, the sampler chain, and the prompt's logits once no sequence holds it."""
        context = self._context
        assert context is not None
        context.drop(running.slot)
        running.sampler.close()
        self._slots[running.slot] = None
        prompt = self._prompts.get(running.prompt)
        if prompt is not None:
            prompt.holders.discard(running.slot)
            if not prompt.holders:
                del self._prompts[running.prompt]

    def _stop(self, error: BaseException) -> None:
        """Fail every job in flight or waiting with ``error`` and free the model; a request from the moment
        the queue is taken starts a new thread (so none is left waiting on this one)."""
        running = [r for r in self._slots if r is not None]
        for job in running:
            self._release(job)
        context, model, self._context, self.model = self._context, self.model, None, None
        with self._wake:
            waiting, self._queue, self._stopped = list(self._queue), deque(), True
        if context is not None:
            context.close()
        if model is not None:
            model.close()
        for job in running:
            _settle(job.ticket.future, error)
        for ticket in waiting:
            if ticket.future.set_running_or_notify_cancel():
                _settle(ticket.future, error)


def _settle(future: concurrent.futures.Future[Outcome], outcome: Outcome | BaseException) -> None:
    """Resolve a job's future with its outcome or error, unless it already is (a cancelled job's)."""
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def _close_engines() -> None:
    """Stop every engine before the interpreter (and llama.cpp's globals) go away."""
    for engine in list(_ENGINES):
        engine.close()
