"""The local backend: a GGUF model run in this process by llama.cpp (``refinelab[local]``: llama-cpp-python).

One engine per loaded file, shared by every :class:`LocalBackend` on it, owns the ``llama_cpp.Llama`` and the
one thread that runs it. Every sample is a job in that thread's first-in first-out queue, so requests from
many strategies are served in the order they came and none waits behind a later one; the event loop stays
free while a job runs (llama.cpp releases the GIL while it computes). A cancelled request leaves the queue,
or, if it is running, stops at its next token. Each job starts from an empty context, so a reply depends
only on its request, never on what ran before (resumed runs and direct llama-cpp-python calls agree).
Why in-process rather than a server: docs/design/models.md ("Local models").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from refinelab.errors import EndpointError, MissingDependency, TransientError, UserError
from refinelab.models._local_files import DEFAULT_MAX_TOKENS, LocalFile
from refinelab.models._local_thinking import ThinkingPlan, generate_thinking, thinking_plan
from refinelab.models._memory import check_fits
from refinelab.models._profiles import Accepts, profile_for
from refinelab.models._thinking import split_thinking
from refinelab.models._types import GenerateConfig, Message, Reply, Usage

MIN_CONTEXT = 256
"""llama.cpp's smallest context window (it rounds a smaller one up, and llama-cpp-python then breaks)."""
_TOO_LONG = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


@dataclass(frozen=True)
class LocalOptions:
    """How a local model is loaded (``REFINELAB_LOCAL_CONTEXT``, ``REFINELAB_LOCAL_THREADS``)."""

    context: int = 4096
    """Context window in tokens (prompt and completion together)."""
    threads: int | None = None
    """Threads that generate; ``None``: llama-cpp-python's default (half the CPUs), which leaves the other
    half to the sandbox running the tests."""

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


@dataclass
class _Job:
    """One sample to generate, and the flag that stops it."""

    messages: list[dict[str, str]]
    settings: dict[str, Any]
    cancelled: threading.Event = dataclasses.field(default_factory=threading.Event)
    thinking: ThinkingPlan | None = None
    """How the thinking goes, for a request with a reasoning effort (``_local_thinking.py``)."""
    opens_thinking: bool = False
    """The model's template may open the thinking section itself (the reply's thinking is read so)."""


class _Engine:
    """A loaded GGUF and the single thread that runs it."""

    def __init__(self, file: LocalFile, options: LocalOptions) -> None:
        self.file, self.options = file, options
        self.load_seconds: float | None = None
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="refinelab-llama")
        self._llama: Any = None
        self._running: _Job | None = None

    def submit(self, work: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """Queue work for the model's thread (first in, first out)."""
        return self._executor.submit(work)

    def load(self) -> float:
        """Load the model (once; in the model's thread) and return how long loading took."""
        if self.load_seconds is None:
            started = time.perf_counter()
            self._llama = _load(self.file, self.options, self._stop_if_cancelled)
            self.load_seconds = time.perf_counter() - started
        return self.load_seconds

    def generate(self, job: _Job) -> Reply:
        """One sample (in the model's thread)."""
        self.load()
        if job.cancelled.is_set():
            raise concurrent.futures.CancelledError
        self._running = job
        try:
            self._llama.reset()  # an empty context: the reply depends on this request alone
            if job.thinking is not None:
                formatted = self._llama.chat_handler.format(messages=job.messages)
                complete = functools.partial(self._complete, formatted)
                response = generate_thinking(complete, formatted.prompt, job.settings, job.thinking)
            else:
                response = self._llama.create_chat_completion(job.messages, **job.settings)
        except ValueError as exc:
            raise _generation_error(exc, self.file) from None
        except RuntimeError as exc:  # llama_decode failed: worth another attempt
            raise TransientError(f"llama.cpp: {exc}") from exc
        finally:
            self._running = None
        return self._counted(_reply(response, opens_thinking=job.opens_thinking))

    def _complete(self, formatted: Any, prompt: str, settings: Mapping[str, Any]) -> Mapping[str, Any]:
        """A raw completion of ``prompt`` (a thinking plan's), made as llama-cpp-python's chat completion of
        the template's ``formatted`` prompt is: its tokens without a second BOS, its stop string and stopping
        criteria (the cancellation check among them), its default sampling settings, and structured output as
        the grammar it would build."""
        from llama_cpp.llama_grammar import LlamaGrammar

        found = {**_CHAT_DEFAULTS, **{k: v for k, v in settings.items() if k != "response_format"}}
        schema = settings.get("response_format", {}).get("schema")
        if schema is not None:
            found["grammar"] = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        found["stop"] = [*found.get("stop", []), *(formatted.stop or [])]
        tokens = self._llama.tokenize(prompt.encode(), add_bos=not formatted.added_special, special=True)
        self._llama.reset()
        return self._llama.create_completion(tokens, stopping_criteria=formatted.stopping_criteria, **found)  # type: ignore[no-any-return]

    def _counted(self, reply: Reply) -> Reply:
        """The reply with its thinking tokens counted by the model's own tokenizer, where not counted yet."""
        if not reply.reasoning or reply.usage is None or reply.usage.reasoning_tokens:
            return reply
        tokens = len(self._llama.tokenize(reply.reasoning.encode(), add_bos=False, special=True))
        usage = dataclasses.replace(reply.usage, reasoning_tokens=min(tokens, reply.usage.completion_tokens))
        return dataclasses.replace(reply, usage=usage)

    def _stop_if_cancelled(self, tokens: object, logits: object) -> bool:
        """llama-cpp-python's stopping criterion: True once the running job is cancelled."""
        running = self._running
        return running is not None and running.cancelled.is_set()


_CHAT_DEFAULTS = {"temperature": 0.2, "top_p": 0.95}
"""llama-cpp-python's chat-completion defaults, which its raw completions (thinking plans) do not share."""
_ENGINES: dict[tuple[str, str, str | None, LocalOptions], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(file: LocalFile, options: LocalOptions) -> _Engine:
    """The process's engine for this file and options (loaded at its first use, then kept)."""
    key = (str(file.path.resolve()), file.sha256, file.chat_template, options)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = _Engine(file, options)
        return _ENGINES[key]


class LocalBackend:
    """A GGUF model run in-process by llama.cpp, behind the one-method :class:`~refinelab.models.Backend`."""

    def __init__(self, model: str, file: LocalFile, options: LocalOptions | None = None) -> None:
        self.model = model
        """``local:...`` as the user wrote it."""
        self.file = file
        """The resolved file."""
        self.options = options or LocalOptions()
        """How it is loaded."""
        self.endpoint = f"in-process llama.cpp ({file.path})"
        """Where it runs (for messages, and the per-endpoint concurrency limit)."""
        self.identity = _identity(file, self.options)
        """What determines its replies (the file's SHA-256, the context and the defaults, never the path):
        the response cache keys on this instead of the model string."""
        self.accepts = Accepts(profile_for(model))
        """Whether the model thinks and its thinking budgets (its profile): shared with the :class:`Model`."""
        self._engine = engine_for(file, self.options)

    async def load(self) -> float:
        """Load the model now (it loads at the first request otherwise); seconds it took, 0-ish if loaded."""
        return float(await asyncio.wrap_future(self._engine.submit(self._engine.load)))

    @property
    def load_seconds(self) -> float | None:
        """How long loading took, once loaded."""
        return self._engine.load_seconds

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        """``n`` samples, each a job in the model's queue; sample ``i`` of a seeded request uses ``seed + i``."""
        chat = [{"role": m.role, "content": m.content} for m in messages]
        profile = self.accepts.profile
        plan, opens = thinking_plan(config.reasoning_effort, profile), profile.reasons and profile.opens_thinking
        jobs = [_Job(chat, self._settings(config, i), thinking=plan, opens_thinking=opens) for i in range(n)]
        generate = self._engine.generate
        futures = [asyncio.wrap_future(self._engine.submit(functools.partial(generate, job))) for job in jobs]
        try:
            return list(await asyncio.gather(*futures))
        except BaseException:
            for job, future in zip(jobs, futures):
                job.cancelled.set()  # a queued job never starts; a running one stops at its next token
                future.cancel()
            raise

    def _settings(self, config: GenerateConfig, sample: int) -> dict[str, Any]:
        defaults = self.file.defaults
        settings: dict[str, Any] = {
            "max_tokens": config.max_tokens or defaults.max_tokens or DEFAULT_MAX_TOKENS,
            "stop": list(config.stop or defaults.stop),
        }
        for key in ("temperature", "top_p"):
            if getattr(config, key) is not None:
                settings[key] = getattr(config, key)
        if config.seed is not None:
            settings["seed"] = config.seed + sample
        if config.json_schema is not None:
            settings["response_format"] = {"type": "json_object", "schema": json.loads(config.json_schema)}
        return settings


def _identity(file: LocalFile, options: LocalOptions) -> str:
    template = None if file.chat_template is None else hashlib.sha256(file.chat_template.encode()).hexdigest()[:16]
    defaults = {"max_tokens": file.defaults.max_tokens or DEFAULT_MAX_TOKENS, "stop": list(file.defaults.stop)}
    described = {"gguf_sha256": file.sha256, "context": options.context, "template": template, "defaults": defaults}
    return "local:" + json.dumps(described, sort_keys=True)


def _load(file: LocalFile, options: LocalOptions, stop_if_cancelled: Callable[[object, object], bool]) -> Any:
    """A ``llama_cpp.Llama`` for the file, with the chat template from the GGUF (or the named default's),
    and a stopping criterion that ends a cancelled job."""
    check_fits(file.path, options.context)
    llama_cpp = import_llama_cpp()
    logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)  # llama.cpp's load chatter, not ours
    try:
        with _quiet_stderr():
            llama = llama_cpp.Llama(str(file.path), n_ctx=options.context, n_threads=options.threads, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise UserError(
            f"llama.cpp could not load {file.path} ({exc}): is it a GGUF model this llama-cpp-python supports, "
            "and is there memory for it?"
        ) from None
    llama.chat_handler = _chat_handler(llama, file, options.context, stop_if_cancelled)
    return llama


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 while llama.cpp loads: some of its notes bypass llama-cpp-python's logger and
    would land in the middle of a progress bar. Failures still arrive, as exceptions."""
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


def _chat_handler(
    llama: Any, file: LocalFile, file_context: int, stop_if_cancelled: Callable[[object, object], bool]
) -> Any:
    """The chat handler llama-cpp-python builds from a GGUF's template (same formatter, same settings), with
    the cancellation check added to its stopping criteria."""
    from llama_cpp import StoppingCriteriaList
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter, chat_formatter_to_chat_completion_handler

    template = file.chat_template or llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise UserError(
            f"{file.path} carries no chat template (tokenizer.chat_template), so the conversation cannot be "
            "formatted for it: use a GGUF converted with its template"
        )
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
        stop_token_ids=[eos],
    )

    def cancellable(**kwargs: Any) -> Any:
        result = formatter(**kwargs)
        tokens, context = len(llama.tokenize(result.prompt.encode(), add_bos=False, special=True)), file_context
        if tokens >= context:  # llama-cpp-python fails on such a prompt with an obscure numpy error
            raise ValueError(f"Requested tokens ({tokens}) exceed context window of {context}")
        criteria = [*(result.stopping_criteria or []), stop_if_cancelled]
        return dataclasses.replace(result, stopping_criteria=StoppingCriteriaList(criteria))

    handler = chat_formatter_to_chat_completion_handler(cancellable)
    handler.format = cancellable  # type: ignore[attr-defined]  # the formatted prompt alone, for thinking plans
    return handler


def _generation_error(exc: ValueError, file: LocalFile) -> Exception:
    too_long = _TOO_LONG.search(str(exc))
    if too_long:
        return EndpointError(
            f"local:{file.label}: a prompt of {too_long[1]} tokens does not fit the context of {too_long[2]}: "
            "set REFINELAB_LOCAL_CONTEXT higher"
        )
    return EndpointError(f"local:{file.label} rejected the request: {exc}")


def _reply(response: Mapping[str, Any], *, opens_thinking: bool = False) -> Reply:
    """A reply from llama-cpp-python's OpenAI-shaped response; usage is the model's own token count. A
    thinking section is taken out of the text (the answer alone is read for code)."""
    choice = response["choices"][0]
    usage = response["usage"]
    text, thinking = split_thinking(choice["message"].get("content") or "", opens_thinking=opens_thinking)
    thought = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    counted = Usage(usage["prompt_tokens"], usage["completion_tokens"], 0, reasoning_tokens=thought)
    return Reply(text, counted, choice["finish_reason"], dict(response), reasoning=thinking)
