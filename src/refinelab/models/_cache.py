"""The response cache: SQLite, keyed by deployment tag, model, messages, settings and sample index.

A repeated or resumed run makes no repeated calls, and samples at temperature > 0 stay distinct
because the sample index is part of the key. The server's address is not part of the key: the same
model moved to another port or host answers from the same cache (each reply records the endpoint that
gave it, and a lookup may ask for one only from given endpoints: a fresh run whose role moved to another
server, ``run --fresh``); two deployments of one model name
that answer differently (another quantisation, another revision) are told apart by a ``deployment``
tag (``[models.endpoints."NAME"] deployment = "..."``). Modes: ``rw`` (default), ``ro`` (replay: a miss is an
error), ``off``. Writes are committed one by one (WAL mode), so a crash loses at most the call in flight.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from refinelab.models._types import GenerateConfig, Message, NotSent, Reply, Usage

CacheMode = Literal["rw", "ro", "off"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    reply TEXT NOT NULL,
    created REAL NOT NULL DEFAULT (julianday('now'))
)
"""


def cache_key(
    deployment: str,
    model: str,
    messages: Sequence[Message],
    config: GenerateConfig,
    sample: int,
    profile: Mapping[str, object] | None = None,
) -> str:
    """A stable hash of everything that determines a response (``deployment``: the user's tag, or "";
    ``profile``: the rules of a model profile that changes what is sent, which then determine the reply too;
    ``None`` for a model whose requests go as asked, whose keys stay the ones they always were)."""
    payload: dict[str, object] = {
        "deployment": deployment,
        "model": model,
        "messages": [[m.role, m.content] for m in messages],
        "config": config.key(),
        "sample": sample,
    }
    if profile is not None:
        payload["profile"] = dict(profile)
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class ResponseCache:
    """A persistent store of replies."""

    def __init__(self, path: str | Path, mode: CacheMode = "rw") -> None:
        self.mode: CacheMode = mode
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if mode != "off":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # As the store does: no fsync per reply (a crash loses at most the last replies, which the
            # next run asks for again); with it, writing each reply cost more than the call it records.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)

    def lookup(self, key: str, *, endpoints: Collection[str] | None = None) -> tuple[Reply, float] | None:
        """The stored reply for ``key`` and the latency of the request that produced it, if any; with
        ``endpoints``, only a reply one of them gave (as :attr:`Backend.endpoint` names it)."""
        if self._db is None:
            return None
        with self._lock:
            row = self._db.execute("SELECT reply, endpoint FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None or (endpoints is not None and row[1] not in endpoints):
            return None
        return _reply_from_json(row[0])

    def put(self, key: str, endpoint: str, model: str, reply: Reply, latency: float = 0.0) -> None:
        """Store a reply and its request's latency (read-write mode only)."""
        if self._db is None or self.mode != "rw":
            return
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, endpoint, model, reply) VALUES (?, ?, ?, ?)",
                (key, endpoint, model, _reply_to_json(reply, latency)),
            )

    def __len__(self) -> int:
        if self._db is None:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        if self._db is not None:
            self._db.close()
            self._db = None


def _reply_to_json(reply: Reply, latency: float) -> str:
    usage = None if reply.usage is None else reply.usage.__dict__
    payload: dict[str, object] = {"text": reply.text, "usage": usage, "finish_reason": reply.finish_reason}
    payload["raw"] = reply.raw
    if reply.reasoning is not None:  # written only when there is some: other replies keep their old form
        payload["reasoning"] = reply.reasoning
    if reply.not_sent:
        payload["not_sent"] = [item.to_json() for item in reply.not_sent]
    return json.dumps({**payload, "latency": latency})


def _reply_from_json(text: str) -> tuple[Reply, float]:
    data = json.loads(text)
    usage = None if data.get("usage") is None else Usage(**data["usage"])
    reply = Reply(data["text"], usage, data.get("finish_reason"), data.get("raw"), reasoning=data.get("reasoning"))
    if data.get("not_sent"):
        reply = replace(reply, not_sent=tuple(NotSent.from_json(item) for item in data["not_sent"]))
    return reply, float(data.get("latency", 0.0))
