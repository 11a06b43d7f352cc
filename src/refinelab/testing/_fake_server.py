"""A real OpenAI-compatible HTTP server on 127.0.0.1, with fault injection: a test double for the
model layer (and for users testing their own setup without a model).

``faults`` is a queue of what to do with the next requests ("429", "500", "slow", "malformed", "drop",
"401", "404", "400"); a request with no queued fault gets a normal answer, or a random fault with
probability ``fault_rate``. Every request body and what was done with it is recorded.

``mimic`` makes it a reasoning model's server (:mod:`refinelab.testing._reasoning`): OpenAI's reasoning
models, refusing what they refuse with their error bodies (a request so refused is logged as ``refused``) and
counting thinking tokens as they do, or vLLM serving a thinking model, returning the thinking.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TextIO

from refinelab.testing._reasoning import OPENAI_REASONING, VLLM_THINKING, ReasoningMimic, with_thinking

MIMICS = {"openai-reasoning": OPENAI_REASONING, "vllm-thinking": VLLM_THINKING}
"""The reasoning servers ``python -m refinelab.testing._fake_server --mimic NAME`` plays."""

ReplyWriter = Callable[[dict[str, object]], str]
"""Writes the answer to a request body."""


def echo(request: dict[str, object]) -> str:
    """Answer ``echo: <last message>``."""
    messages = request["messages"]
    assert isinstance(messages, list)
    return f"echo: {messages[-1]['content']}"


class FakeOpenAI(ThreadingHTTPServer):
    """The server; see the module docstring. Use :func:`serve` to run it in a thread."""

    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 resets connections under concurrent load

    def __init__(self, reply: ReplyWriter = echo, *, mimic: ReasoningMimic | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.mimic = mimic
        """The reasoning model's server it plays, if any."""
        self.faults: deque[str] = deque()
        self.fault_rate = 0.0
        self.random = random.Random(1)  # noqa: S311 - fault injection, not cryptography
        self.usage = True
        self.accept_n = True
        self.ignore_n = False
        """Answer one choice whatever ``n`` asks for, with no error (Ollama's OpenAI-compatible endpoint)."""
        self.max_n: int | None = None
        """The largest ``n`` accepted (a larger one gets a 400 naming ``n``, as OpenAI's 128 does); ``None``: any."""
        self.accept_schema = True
        self.delay = 0.0
        self.slow_seconds = 2.0
        self.lock = threading.Lock()
        self.log: list[tuple[dict[str, Any], str]] = []
        """Every request body (parsed JSON) and what was done with it."""
        self.answer_ids: dict[str, dict[str, Any]] = {}
        """Each normal answer's ``id`` (``chatcmpl-N``: unique, as a real server's) and the body it answered, in
        the order they were answered (a client that stores replies keeps the id in the raw response)."""
        self.answers: TextIO | None = None
        """Where to note each answer before and after it is sent (a JSON line each: ``["sending" or "sent",
        the request's last message]``)."""

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet: clients that go away (timeouts under test) are expected here."""

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_action(self) -> str:
        """What to do with the next request: a queued fault, a random one, or ``ok``."""
        with self.lock:
            if self.faults:
                return self.faults.popleft()
            if self.fault_rate and self.random.random() < self.fault_rate:
                return self.random.choice(["429", "500", "malformed", "drop"])
            return "ok"

    def record(self, body: dict[str, Any], action: str) -> None:
        """Log a request and what was done with it."""
        with self.lock:
            self.log.append((body, action))

    def note(self, step: str, body: dict[str, Any]) -> None:
        """Note in :attr:`answers` that a normal answer to ``body`` is ``"sending"`` or was ``"sent"`` in full.
        Both are written because a server killed between sending and writing leaves a client with an answer
        that no ``"sent"`` line records."""
        if self.answers is not None:
            messages = body["messages"]
            assert isinstance(messages, list)
            with self.lock:
                self.answers.write(json.dumps([step, messages[-1]["content"]]) + "\n")
                self.answers.flush()

    def answer_id(self, body: dict[str, Any]) -> str:
        """A new answer's ``id``, noted with the ``body`` it answers (:attr:`answer_ids`)."""
        with self.lock:
            found = f"chatcmpl-{len(self.answer_ids) + 1}"
            self.answer_ids[found] = body
        return found

    def answered(self) -> list[dict[str, Any]]:
        """Bodies of the requests that got a normal answer."""
        return [body for body, action in self.log if action == "ok"]

    def refused(self) -> list[dict[str, Any]]:
        """Bodies of the requests the mimicked reasoning server refused."""
        return [body for body, action in self.log if action == "refused"]


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid 40 ms stalls

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        action = self.server.next_action()
        n = int(body.get("n", 1))
        if action == "ok" and n > 1 and (not self.server.accept_n or n > (self.server.max_n or n)):
            action = "reject-n"
        if action == "ok" and "response_format" in body and not self.server.accept_schema:
            action = "reject-schema"
        mimic = self.server.mimic
        refusal = mimic.refusal(body) if action == "ok" and mimic is not None else None
        if refusal is not None:
            self.server.record(body, "refused")
            self._send(refusal[0], json.dumps(refusal[1]).encode())
            return
        self.server.record(body, action)
        if self.server.delay:
            time.sleep(self.server.delay)
        getattr(self, "_" + action.replace("-", "_"), lambda b: self._status(int(action), b))(body)

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def _status(self, status: int, body: dict[str, object]) -> None:
        headers = {"Retry-After": "0.01"} if status == 429 else {}
        error = {"error": {"message": f"injected {status}", "type": "test", "code": status}}
        self._send(status, json.dumps(error).encode(), headers)

    def _reject_n(self, body: dict[str, object]) -> None:
        said = "n > 1 is not supported" if not self.server.accept_n else f"n must be at most {self.server.max_n}"
        self._send(400, json.dumps({"error": {"message": said, "code": 400}}).encode())

    def _reject_schema(self, body: dict[str, object]) -> None:
        self._send(400, json.dumps({"error": {"message": "response_format is not supported", "code": 400}}).encode())

    def _ok(self, body: dict[str, object]) -> None:
        n = 1 if self.server.ignore_n else int(body.get("n", 1))  # type: ignore[call-overload]
        texts = [self.server.reply(body) for _ in range(n)]
        choices = [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ]
        mimic = self.server.mimic
        counts = [with_thinking(mimic, body, c, t) for c, t in zip(choices, texts)] if mimic else []
        thought = [c[0] for c in counts] or [0] * n
        visible = [c[1] for c in counts] or [len(t.split()) for t in texts]
        response: dict[str, object] = {
            "id": self.server.answer_id(body),
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": choices,
        }
        if self.server.usage:
            messages = body["messages"]
            assert isinstance(messages, list)
            prompt = sum(len(str(m["content"]).split()) for m in messages)
            completion = sum(visible) + sum(thought)
            usage: dict[str, object] = {"prompt_tokens": prompt, "completion_tokens": completion}
            usage["total_tokens"] = prompt + completion
            if mimic is not None and mimic.kind == "openai":  # OpenAI counts the thinking; vLLM does not
                usage["completion_tokens_details"] = {"reasoning_tokens": sum(thought)}
            elif mimic is not None and mimic.reports_zero:
                usage["completion_tokens_details"] = {"reasoning_tokens": 0}
            response["usage"] = usage
        self.server.note("sending", body)
        self._send(200, json.dumps(response).encode())
        self.wfile.flush()
        self.server.note("sent", body)

    def _slow(self, body: dict[str, object]) -> None:
        time.sleep(self.server.slow_seconds)
        self._ok(body)

    def _malformed(self, body: dict[str, object]) -> None:
        self._send(200, b"{this is not json")

    def _drop(self, body: dict[str, object]) -> None:
        self.close_connection = True
        self.connection.close()


@contextmanager
def serve(reply: ReplyWriter = echo, *, mimic: ReasoningMimic | None = None) -> Iterator[FakeOpenAI]:
    """Run a :class:`FakeOpenAI` in a background thread for the ``with`` block (``mimic``: as a reasoning
    model's server)."""
    server = FakeOpenAI(reply, mimic=mimic)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    """``python -m refinelab.testing._fake_server [--delay S] [--log FILE]``: serve until killed; prints the
    base URL; with ``--log``, appends to FILE a JSON line before and after each answer is sent (see
    :attr:`FakeOpenAI.answers`)."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--log", help="append a line before and after each answer is sent")
    parser.add_argument("--mimic", choices=sorted(MIMICS), help="play a reasoning model's server")
    args = parser.parse_args()
    server = FakeOpenAI(mimic=MIMICS[args.mimic] if args.mimic else None)
    server.delay = args.delay
    if args.log:
        server.answers = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 - open while serving, until killed
    print(server.base_url, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
