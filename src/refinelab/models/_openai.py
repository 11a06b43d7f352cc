"""The OpenAI-compatible backend (OpenAI, vLLM, Ollama, llama.cpp server, anything speaking
``/v1/chat/completions``), on the official ``openai`` SDK with its own retries turned off: retrying
is the Model's job, so every retry is counted once."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from refinelab.errors import EndpointError, MissingDependency, NotSupported, TransientError
from refinelab.models._profiles import Accepts, effort_fields, profile_for
from refinelab.models._thinking import message_thinking, split_thinking
from refinelab.models._tokens import split_usage, with_reasoning_counted
from refinelab.models._types import GenerateConfig, Message, Reply, Usage

CONNECT_SECONDS = 2.0
"""How long to wait for a server to accept a connection (a reply may take up to ``timeout``). A
reachable server accepts in milliseconds, even a busy one (the kernel answers for it); 2 s leaves room
for one lost packet and reports a host that drops connections within 3 s. Once a server has answered,
a connection timeout is retried like any transient failure."""


class OpenAIBackend:
    """Chat completions at ``base_url``."""

    def __init__(
        self, model: str, base_url: str, api_key: str, *, timeout: float = 600.0, accepts: Accepts | None = None
    ) -> None:
        try:
            import openai
        except ImportError:
            raise MissingDependency(
                "the OpenAI-compatible backend needs the openai package: pip install openai"
            ) from None
        self.model = model
        self.endpoint = base_url.rstrip("/")
        self.name = model.partition(":")[2] or model
        self._openai = openai
        self._api_key = api_key
        self._timeout = timeout
        self._clients: dict[int, Any] = {}
        self.accepts = accepts or Accepts(profile_for(model))
        """What the model takes (its profile, and what its server refused): shared with the :class:`Model`."""

    def _client(self) -> Any:
        """One client per event loop: an async HTTP client cannot move between loops."""
        loop = id(asyncio.get_running_loop())
        if loop not in self._clients:
            timeout = self._openai.Timeout(self._timeout, connect=min(CONNECT_SECONDS, self._timeout))
            self._clients[loop] = self._openai.AsyncOpenAI(
                base_url=self.endpoint,
                api_key=self._api_key,
                max_retries=0,
                timeout=timeout,
                http_client=_transport(self._openai, timeout),
            )
        return self._clients[loop]

    async def aclose(self) -> None:
        """Close this event loop's connections."""
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.close()

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        """``n`` replies; errors become Transient/NotSupported/EndpointError (see :class:`Backend`)."""
        try:
            # The body goes as built and the reply comes back as plain JSON: the SDK's typed transform of each
            # request and its response models were a tenth of ``run``'s time per call (docs/design/sandbox.md).
            body = self._request(messages, config, n)
            data = await self._client().post("/chat/completions", body=body, cast_to=object)
        except self._openai.APIError as exc:
            raise self._translate(exc, config, n) from exc
        except ValueError as exc:  # a body that is not JSON
            raise TransientError("malformed response") from exc
        return self._replies(data, n, thinks=config.reasoning_effort != "none")

    def _request(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.name,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        for key in ("temperature", "top_p", "seed"):
            if getattr(config, key) is not None:
                request[key] = getattr(config, key)
        if config.max_tokens is not None:
            request[self.accepts.limit_field] = config.max_tokens
        if config.stop:
            request["stop"] = list(config.stop)
        if n > 1:
            request["n"] = n
        if config.json_schema is not None:
            schema = json.loads(config.json_schema)
            request["response_format"] = {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
        request.update(effort_fields(self.accepts.profile, config.reasoning_effort))
        return request

    def _replies(self, data: object, n: int, *, thinks: bool = True) -> list[Reply]:
        """Replies from the response JSON (parsed directly: the SDK's typed models cost ~0.5 ms a call);
        ``thinks``: the request left thinking on, so a reply cut off before its ``</think>`` is all thinking."""
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not all(isinstance(c, dict) for c in choices):
            raise TransientError("malformed response (missing choices)")
        if len(choices) < n:  # Ollama answers one choice for any ``n``, without an error: ``n`` is not taken
            raise NotSupported("n", reason=f"{self.endpoint} gave {len(choices)} choices for n={n}")
        assert isinstance(data, dict)
        parts = [self._answer_and_thinking(choice, thinks) for choice in choices[:n]]
        usage = _usage(data.get("usage"))
        thoughts = [thinking for _, thinking in parts if thinking]
        # no count, or 0 beside thinking text (vLLM for a template-opened block, SGLang, gateways): count the
        # text, all samples' together, so the request's thinking is shared as evenly as the server's count is
        if usage is not None and thoughts and usage.reasoning_tokens == 0:
            usage = with_reasoning_counted(self.model, usage, thoughts)
        shares: list[Usage | None] = [None] * n if usage is None else list(split_usage(usage, n))
        replies = []
        for choice, (text, thinking), share in zip(choices[:n], parts, shares):
            raw = data if n == 1 else {**data, "choices": [choice]}  # each sample keeps its own choice only
            replies.append(Reply(text, share, choice.get("finish_reason"), raw, reasoning=thinking))
        return replies

    def _answer_and_thinking(self, choice: dict[str, Any], thinks: bool) -> tuple[str, str | None]:
        """A choice's answer and its thinking (from the message's field, else from the text); with thinking off
        (``thinks`` false), a thinking field beside no answer is the answer."""
        message = choice.get("message")
        message = message if isinstance(message, dict) else {}
        content = message.get("content")
        cut_off = thinks and choice.get("finish_reason") == "length"
        text, inline = split_thinking(
            content if isinstance(content, str) else "", opens_thinking=self._opens, cut_off=cut_off
        )
        field = message_thinking(message)
        if field is not None and not thinks and not text.strip():
            # thinking was off, so this is the answer: vLLM's deepseek_r1 parser puts Qwen3's there (vllm#19222)
            return field, None
        return text, field or inline

    @property
    def _opens(self) -> bool:
        return self.accepts.profile.opens_thinking

    def _translate(self, exc: Exception, config: GenerateConfig, n: int) -> Exception:
        openai = self._openai
        status = getattr(exc, "status_code", None)
        if isinstance(exc, openai.APITimeoutError) and not _in_chain(exc, "ConnectTimeout"):
            return TransientError("timeout")
        if isinstance(exc, openai.APIConnectionError):
            # connection=True only when no connection was made; a dropped one is an ordinary transient (the
            # aiohttp transport reports a connection the server closed as a connect timeout: it is not one)
            connected = _in_chain(exc, "ServerDisconnectedError") or not any(
                _in_chain(exc, name) for name in ("ConnectError", "ConnectTimeout", "UnsupportedProtocol")
            )
            return TransientError(self._connection_failure(exc), connection=not connected)
        if isinstance(exc, openai.APIResponseValidationError):
            return TransientError("malformed response")
        if status == 429 or (isinstance(status, int) and status >= 500):
            return TransientError(str(status), retry_after=_retry_after(exc))
        return self._fatal(exc, status, config, n)

    def _connection_failure(self, exc: Exception) -> str:
        """Why no connection was made (or why it broke), in words a user can act on."""
        host = urlsplit(self.endpoint).netloc
        if _in_chain(exc, "ServerDisconnectedError"):
            return f"{host} closed the connection before answering"
        if _in_chain(exc, "gaierror"):
            return f"the host name in {host} does not resolve (unknown host)"
        if _in_chain(exc, "ConnectionRefusedError"):
            return f"nothing is listening at {host} (connection refused)"
        if _in_chain(exc, "ConnectTimeout"):
            return f"{host} did not accept a connection within {CONNECT_SECONDS:g} s"
        return f"connection failed: {_innermost(exc)}"

    def _fatal(self, exc: Exception, status: object, config: GenerateConfig, n: int) -> Exception:
        message = str(getattr(exc, "message", exc))
        refused = refused_setting(exc, message, config) if status == 400 else None
        if refused is not None:
            return refused
        if status == 400 and n > 1 and "n" in message.lower():
            return NotSupported("n")
        if status == 400 and config.json_schema is not None and ("response_format" in message or "schema" in message):
            return NotSupported("json_schema")
        if status == 401:
            return EndpointError(
                f"{self.endpoint} refused the API key for {self.model}: set the right key (OPENAI_API_KEY for OpenAI)"
            )
        if status == 404:
            listing = f"GET {self.endpoint}/models lists them"
            return EndpointError(f"{self.endpoint} does not know model {self.name!r}: check the name ({listing})")
        return EndpointError(f"{self.endpoint} rejected the request for {self.model} ({status}): {message}")


WIRE_SETTINGS: Mapping[str, str] = {
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "max_tokens": "max_tokens",
    "max_completion_tokens": "max_tokens",
    "reasoning_effort": "reasoning_effort",
    "chat_template_kwargs": "reasoning_effort",
    "thinking_token_budget": "reasoning_effort",
}
"""Request fields a server may refuse, and the setting each carries (``response_format`` and ``n`` have
their own fallbacks)."""
_NAMED = re.compile(r"Unsupported (parameter|value): '([\w.\[\]]+)'")
_INSTEAD = re.compile(r"Use '(max_completion_tokens|max_tokens)' instead")


def refused_setting(exc: Exception, message: str, config: GenerateConfig) -> NotSupported | None:
    """The setting a 400 refuses, read from OpenAI's error body (``param`` and ``code``
    ``unsupported_parameter`` / ``unsupported_value``) or from its message; ``None`` for another 400.

    A refused value (``temperature`` 0: "Only the default (1) value is supported") is the value, so other
    values still go; a refused parameter is the setting; ``max_tokens`` with "Use 'max_completion_tokens'
    instead" is a rename, not a refusal."""
    code, param = getattr(exc, "code", None), getattr(exc, "param", None)
    named = _NAMED.search(message)
    if not isinstance(param, str) or code not in ("unsupported_parameter", "unsupported_value"):
        if named is None:
            return None
        code, param = f"unsupported_{named.group(1)}", named.group(2)
    setting = WIRE_SETTINGS.get(param)
    if setting is None or getattr(config, setting) in (None, ()):
        return None
    instead = _INSTEAD.search(message)
    if setting == "max_tokens":
        return NotSupported("max_tokens", reason=message, rename=instead.group(1) if instead else None)
    value = getattr(config, setting)
    shown = ", ".join(value) if isinstance(value, tuple) else str(value)
    return NotSupported(setting, value=shown if code == "unsupported_value" else None, reason=message)


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _in_chain(exc: BaseException, type_name: str) -> bool:
    """True when an exception of that class name caused ``exc`` (the HTTP library is the SDK's business,
    so its classes are matched by name)."""
    return any(type(cause).__name__ == type_name for cause in _causes(exc))


def _innermost(exc: BaseException) -> str:
    last = _causes(exc)[-1]
    return f"{type(last).__name__}: {last}"


def _usage(usage: object) -> Usage | None:
    """The request's ``usage`` block (with ``n`` > 1 the server reports the prompt once and the completions
    summed; :func:`split_usage` shares it among the samples)."""
    if not isinstance(usage, dict) or not isinstance(usage.get("prompt_tokens"), int):
        return None
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else 0
    completion = usage.get("completion_tokens")
    output = usage.get("completion_tokens_details")
    thought = output.get("reasoning_tokens") if isinstance(output, dict) else None
    completion = completion if isinstance(completion, int) else 0
    thought = thought if isinstance(thought, int) else 0
    return Usage(usage["prompt_tokens"], completion, cached or 0, reasoning_tokens=thought)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None


def _transport(openai: Any, timeout: Any) -> Any:
    """The HTTP client under the SDK: the SDK's aiohttp one where it offers it and aiohttp is installed (it
    comes with refinelab: ``openai[aiohttp]``), which spends about a third of httpx's CPU per request at 64
    in flight; else ``None``, the SDK's own httpx client."""
    client = getattr(openai, "DefaultAioHttpClient", None)
    if client is None or importlib.util.find_spec("aiohttp") is None:
        return None
    try:
        return client(timeout=timeout)
    except RuntimeError:  # the SDK could not load its aiohttp transport
        return None
