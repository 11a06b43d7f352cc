"""The local backend: a GGUF model run in this process by llama.cpp (``refinelab[local]``: llama-cpp-python).

One engine per loaded file and options, shared by every :class:`LocalBackend` on it, owns the model and the
thread that decodes it: concurrent requests (the problems of a run, the samples of ``sampling``, the actor
and the critic) are decoded together, one sequence each, in llama.cpp batches, and the samples of one prompt
share its evaluation (:mod:`refinelab.models._local_engine`). A request's handling is three steps a subclass
or a later feature can change one at a time: the prompt (:meth:`LocalBackend.prompt`, the chat template),
the jobs (:meth:`LocalBackend.jobs`, the settings of each sample), and the reply
(:meth:`LocalBackend.reply`, from what the engine generated). A request with a reasoning effort to a thinking
model runs its plan (thinking off, or within a budget: :mod:`refinelab.models._local_thinking`) as completions
of the raw prompt, each a job of the same engine, so its samples are decoded beside everything else. Why
in-process rather than a server, and what batching keeps reproducible: docs/design/models.md ("Local models").
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from refinelab.errors import UserError
from refinelab.models._local_files import DEFAULT_MAX_TOKENS, LocalFile
from refinelab.models._local_thinking import ThinkingPlan, generate_thinking, thinking_plan
from refinelab.models._profiles import Accepts, profile_for
from refinelab.models._thinking import split_thinking
from refinelab.models._types import GenerateConfig, Message, Reply, Usage

if TYPE_CHECKING:
    from refinelab.models._local_engine import Engine, Job, Outcome
    from refinelab.models._local_llama import ChatTemplate, Placement
    from refinelab.models._model import Model

MIN_CONTEXT = 256
"""llama.cpp's smallest context window (it rounds a smaller one up)."""


@dataclass(frozen=True)
class LocalOptions:
    """How a local model is loaded and run. ``open_model`` takes them from ``[models.endpoints."local:..."]``
    in ``refinelab.toml`` or a spec's ``[models]`` (``context``, ``threads``, ``n_gpu_layers``,
    ``concurrency``), over ``REFINELAB_LOCAL_CONTEXT`` and ``REFINELAB_LOCAL_THREADS``, over these defaults."""

    context: int = 4096
    """Context window of each sequence in tokens (prompt and completion together)."""
    threads: int | None = None
    """Threads that decode; ``None``: llama-cpp-python's defaults, half the CPUs to generate (the other half
    run the tests) and all of them to evaluate a prompt."""
    n_gpu_layers: int | None = None
    """Layers offloaded to the GPU (-1: all); ``None``: all when llama.cpp was built with a GPU backend,
    none otherwise."""
    sequences: int | None = None
    """Sequences decoded together (the model's ``concurrency``); ``None``: :func:`default_sequences`."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> LocalOptions:
        """Options from the environment; a value that is not a positive integer is a user error."""
        context = _positive(environ, "REFINELAB_LOCAL_CONTEXT") or cls.context
        if context < MIN_CONTEXT:
            raise UserError(f"REFINELAB_LOCAL_CONTEXT={context}: llama.cpp needs at least {MIN_CONTEXT} tokens")
        return cls(context, _positive(environ, "REFINELAB_LOCAL_THREADS"))


def _positive(environ: Mapping[str, str], name: str) -> int | None:
    text = environ.get(name)
    if not text:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise UserError(f"{name}={text!r}: must be a positive integer")
    return int(text)


def default_sequences(gpu: bool, cpus: int | None = None) -> int:
    """Sequences decoded together when nothing says: 16 on a GPU; on a CPU four a core, from 4 to 16 (a
    decode step reads every weight once however many sequences it advances, until the cores, not the memory,
    are the limit: bench/local_batching.py measures it). At load the number is lowered to what the memory left
    beside the weights holds (each sequence has a KV cache of its whole context)."""
    if gpu:
        return 16
    cores = cpus or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    return max(4, min(16, 4 * cores))


class LocalBackend:
    """A GGUF model run in-process by llama.cpp, behind the one-method :class:`~refinelab.models.Backend`;
    concurrent requests are decoded together."""

    batches_requests = True
    """The Model sends one request per sample (each cached as soon as it is done, each with its own seed)
    and this backend decodes them together."""

    def __init__(self, model: str, file: LocalFile, options: LocalOptions | None = None) -> None:
        self.model = model
        """``local:...`` as the user wrote it."""
        self.file = file
        """The resolved file."""
        options = options or LocalOptions()
        self.options = resolved(options)
        """How it is loaded and run (every default resolved)."""
        self.endpoint = f"in-process llama.cpp ({file.path})"
        """Where it runs (for messages, and the per-endpoint concurrency limit)."""
        self.identity = _identity(file, self.options)
        """What determines its replies (the file's SHA-256, the context, the defaults and the layers on a GPU,
        never the path): the response cache keys on this instead of the model string."""
        self.accepts = Accepts(profile_for(model))
        """Whether the model thinks and its thinking budgets (its profile): shared with the :class:`Model`."""
        self._engine = engine_for(file, self.options, sequences_given=options.sequences is not None)

    @property
    def sequences(self) -> int:
        """Sequences decoded together (the model's concurrency; once loaded, fewer if memory holds no more)."""
        return self._engine.sequences

    async def load(self) -> float:
        """Load the model now (it loads at the first request otherwise); seconds it took."""
        seconds: float = await asyncio.wrap_future(self._engine.ready())
        return seconds

    @property
    def load_seconds(self) -> float | None:
        """How long loading took, once loaded."""
        return self._engine.load_seconds

    @property
    def placement(self) -> Placement | None:
        """Where the model runs (CPU, GPU, how many layers offloaded), once loaded."""
        return None if self._engine.model is None else self._engine.model.placement

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        """``n`` samples, decoded with every other request in flight; sample ``i`` of a seeded request uses
        ``seed + i``. A thinking model asked for a reasoning effort follows its thinking plan."""
        await self.load()
        template = self._engine.template
        assert template is not None
        prompt = self.prompt(template, messages, config)
        jobs = self.jobs(template, prompt, config, n)
        plan = thinking_plan(config.reasoning_effort, self.accepts.profile)
        if plan is not None:
            return list(await asyncio.gather(*(self._think(job, plan) for job in jobs)))
        return [self.reply(outcome) for outcome in await self._generate(jobs)]

    async def _generate(self, jobs: list[Job]) -> list[Outcome]:
        """The jobs decoded (with whatever else is in flight); cancelled, they leave the engine."""
        tickets = self._engine.submit(jobs)
        try:
            return list(await asyncio.gather(*(asyncio.wrap_future(t.future) for t in tickets)))
        except BaseException:
            for ticket in tickets:
                ticket.cancel()  # a queued job never starts; a running one stops at the next step
            raise

    async def _think(self, job: Job, plan: ThinkingPlan) -> Reply:
        """One sample under a thinking plan: its completions of the raw prompt are jobs of the engine, so the
        samples' thinking (one prompt, evaluated once) and answers are decoded in batches too."""
        from refinelab.models._local_engine import Job

        took: list[float] = []

        async def complete(prompt: str, settings: Mapping[str, Any]) -> Mapping[str, Any]:
            sampling = dataclasses.replace(settings["sampling"], grammar=settings.get("grammar"))
            # after the thinking (``took``), a prompt that fills the context is a reply cut there, not the user's
            job = Job(prompt, sampling, settings["max_tokens"], tuple(settings["stop"]), full_is_length=bool(took))
            (outcome,) = await self._generate([job])
            took.append(outcome.seconds)
            choice = {"text": outcome.text, "finish_reason": outcome.finish_reason}
            return {"choices": [choice], "usage": _usage(outcome)}

        settings = {"sampling": job.sampling, "max_tokens": job.max_tokens, "stop": list(job.stop)}
        if job.sampling.grammar is not None:  # structured output constrains the answer, not the thinking
            settings["grammar"] = job.sampling.grammar
        chat = await generate_thinking(complete, job.prompt, settings, plan)
        reply = _reply(self._wrapped(chat), opens_thinking=self._opens, thinks=plan.enabled, seconds=sum(took))
        return self._counted(reply)

    def prompt(self, template: ChatTemplate, messages: Sequence[Message], config: GenerateConfig) -> str:
        """The formatted prompt: the model's chat template over the conversation."""
        return template.render([{"role": m.role, "content": m.content} for m in messages])

    def jobs(self, template: ChatTemplate, prompt: str, config: GenerateConfig, n: int) -> list[Job]:
        """One job a sample: the request's settings over the model's defaults and llama-cpp-python's."""
        from refinelab.models._local_engine import Job
        from refinelab.models._local_llama import Sampling

        defaults = self.file.defaults
        max_tokens = config.max_tokens or defaults.max_tokens or DEFAULT_MAX_TOKENS
        stop = (*(config.stop or defaults.stop), *template.stop)
        grammar = None if config.json_schema is None else _grammar(config.json_schema)
        base = Sampling(grammar=grammar)
        temperature = base.temperature if config.temperature is None else config.temperature
        top_p = base.top_p if config.top_p is None else config.top_p
        seeds = [None if config.seed is None else config.seed + i for i in range(n)]
        samplings = [dataclasses.replace(base, temperature=temperature, top_p=top_p, seed=s) for s in seeds]
        return [Job(prompt, sampling, max_tokens, stop) for sampling in samplings]

    def reply(self, outcome: Outcome) -> Reply:
        """The reply for a finished job: its text (a thinking section taken out), the model's own token
        counts, the time it took in the batch (not the time it queued), and a response shaped like
        llama-cpp-python's."""
        message = {"role": "assistant", "content": outcome.text}
        choice = {"index": 0, "message": message, "finish_reason": outcome.finish_reason}
        raw = self._wrapped({"choices": [choice], "usage": _usage(outcome)})
        return self._counted(_reply(raw, opens_thinking=self._opens, seconds=outcome.seconds))

    @property
    def _opens(self) -> bool:
        """Whether the model's template may open the thinking section itself (its reply is read so)."""
        profile = self.accepts.profile
        return profile.reasons and profile.opens_thinking

    def _wrapped(self, chat: Mapping[str, Any]) -> dict[str, Any]:
        """A chat completion with the fields llama-cpp-python's carries (id, object, created, model)."""
        head = {"id": f"chatcmpl-{uuid.uuid4()}", "object": "chat.completion", "created": int(time.time())}
        return {**head, "model": str(self.file.path), **chat}

    def _counted(self, reply: Reply) -> Reply:
        """The reply with its thinking tokens counted by the model's own tokenizer, where not counted yet."""
        model = self._engine.model
        if not reply.reasoning or reply.usage is None or reply.usage.reasoning_tokens or model is None:
            return reply
        tokens = len(model.tokenize(reply.reasoning))
        usage = dataclasses.replace(reply.usage, reasoning_tokens=min(tokens, reply.usage.completion_tokens))
        return dataclasses.replace(reply, usage=usage)


def _usage(outcome: Outcome) -> dict[str, int]:
    """An outcome's token counts, as llama-cpp-python reports them."""
    total = outcome.prompt_tokens + outcome.completion_tokens
    return {
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "total_tokens": total,
    }


def _reply(
    response: Mapping[str, Any], *, opens_thinking: bool = False, thinks: bool = True, seconds: float | None = None
) -> Reply:
    """A reply from an OpenAI-shaped chat completion; usage is the model's own token count. A thinking section
    is taken out of the text (the answer alone is read for code); ``thinks``: thinking was left on, so a reply
    cut off at the cap before a template-opened section's ``</think>`` is all thinking, every token of it.
    ``seconds``: the time the engine worked on it, the reply's latency."""
    choice = response["choices"][0]
    usage = response["usage"]
    cut_off = thinks and choice["finish_reason"] == "length"
    content = choice["message"].get("content") or ""
    text, thinking = split_thinking(content, opens_thinking=opens_thinking, cut_off=cut_off)
    thought = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    if cut_off and thinking and not text:  # no answer: the reply's tokens are its thinking's
        thought = usage["completion_tokens"]
    counted = Usage(usage["prompt_tokens"], usage["completion_tokens"], 0, reasoning_tokens=thought)
    raw = dict(response)
    return Reply(text, counted, choice["finish_reason"], raw, reasoning=thinking, latency_seconds=seconds)


def resolved(options: LocalOptions) -> LocalOptions:
    """The options with their defaults made explicit (the layers on a GPU, the sequences)."""
    from refinelab.models._local_llama import gpu_offload_available

    gpu = gpu_offload_available() if options.n_gpu_layers is None else options.n_gpu_layers != 0
    layers = options.n_gpu_layers if options.n_gpu_layers is not None else (-1 if gpu else 0)
    return dataclasses.replace(options, n_gpu_layers=layers, sequences=options.sequences or default_sequences(gpu))


_ENGINES: dict[tuple[str, str, str | None, LocalOptions], Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(file: LocalFile, options: LocalOptions, *, sequences_given: bool = False) -> Engine:
    """The process's engine for this file and (resolved) options, loaded at its first use, then kept;
    ``sequences_given``: the user set the number of sequences (too many for the memory is then an error)."""
    from refinelab.models._local_engine import Engine, EngineOptions

    key = (str(file.path.resolve()), file.sha256, file.chat_template, options)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            assert options.n_gpu_layers is not None and options.sequences is not None
            settings = EngineOptions(
                options.context, options.threads, options.n_gpu_layers, options.sequences, sequences_given
            )
            _ENGINES[key] = Engine(file.path, file.chat_template, settings)
        return _ENGINES[key]


def _identity(file: LocalFile, options: LocalOptions) -> str:
    template = None if file.chat_template is None else hashlib.sha256(file.chat_template.encode()).hexdigest()[:16]
    defaults = {"max_tokens": file.defaults.max_tokens or DEFAULT_MAX_TOKENS, "stop": list(file.defaults.stop)}
    described: dict[str, object] = {
        "gguf_sha256": file.sha256,
        "context": options.context,
        "template": template,
        "defaults": defaults,
    }
    if options.n_gpu_layers:  # a GPU computes with other rounding than the CPU: other replies
        described["n_gpu_layers"] = options.n_gpu_layers
    return "local:" + json.dumps(described, sort_keys=True)


def _grammar(schema: str) -> str:
    """The llama.cpp grammar for a JSON schema (llama-cpp-python's converter; any JSON when it cannot)."""
    from llama_cpp import llama_grammar

    try:
        return str(llama_grammar.json_schema_to_gbnf(schema))
    except Exception:  # noqa: BLE001 - llama-cpp-python falls back the same way
        return str(llama_grammar.JSON_GBNF)


async def ping_report(model: Model) -> list[str]:
    """``refinelab ping`` for a local model: load it (timed), generate up to 64 tokens greedily, and say
    where it runs and how fast."""
    backend = model.backend
    if not isinstance(backend, LocalBackend):
        raise TypeError(f"{model.name} is not a local model")
    loaded = await backend.load()
    prompt = [Message.user("Count from 1 to 100, separated by spaces.")]
    completion = await model.generate(prompt, GenerateConfig(temperature=0.0, max_tokens=64))
    usage, seconds = completion.usage, completion.latency_seconds
    size = backend.file.path.stat().st_size / 1e6
    where = backend.placement.describe() if backend.placement is not None else "not loaded"
    return [
        f"{completion.model}: {completion.text.strip()[:60]!r}",
        f"{backend.endpoint}, {size:.0f} MB, sha256 {backend.file.sha256[:12]}",
        f"runs {where}; up to {backend.sequences} sequences decoded together",
        f"loaded in {loaded:.2f} s; {usage.completion_tokens} tokens in {seconds:.2f} s = "
        f"{usage.completion_tokens / seconds:.1f} tokens/s (prompt {usage.prompt_tokens} tokens)",
    ]
