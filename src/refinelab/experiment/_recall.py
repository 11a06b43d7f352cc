"""SELF-REDRAFT's recall on draft over a stored run: when the critic said "redraft", did the next program
really take a different approach? An auxiliary (judge) model decides from the two programs alone."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from refinelab.metrics import Rate
from refinelab.models import GenerateConfig, Message, Model
from refinelab.store import Store
from refinelab.strategies import Suggestion

JUDGE_SYSTEM = (
    "You compare two programs written one after the other for the same programming task. You judge only "
    "the approach, not correctness."
)
JUDGE_TURN = """First program:
```python
{old}
```

Second program:
```python
{new}
```

Does the second program take a fundamentally different approach from the first (a different algorithm, \
data structure or overall method), rather than the same approach with details fixed or rearranged? \
Answer with <changed>yes</changed> or <changed>no</changed> and nothing else."""
JUDGE_CONFIG = GenerateConfig(temperature=0.0, max_tokens=64)
"""Deterministic, short answers."""
_ANSWER = re.compile(r"<changed>\s*(yes|no)\s*</changed>", re.IGNORECASE)


@dataclass(frozen=True)
class DraftPair:
    """Two consecutive programs of a stored trajectory and what the critic suggested between them."""

    config: str
    """Configuration key."""
    problem: str
    """``benchmark/problem_id``."""
    repeat: int
    """Repetition number."""
    index: int
    """The first program's attempt index (the second is the next attempt)."""
    suggestion: Suggestion
    """The critic's suggestion on the first program (``redraft`` or ``refine``)."""
    old: str
    """The first program."""
    new: str
    """The program written after the suggestion."""


@dataclass(frozen=True)
class Judgement:
    """The judge's answer on one pair."""

    pair: DraftPair
    """The pair judged."""
    changed: bool | None
    """The approach changed; ``None`` when the answer could not be read (counted apart, never guessed)."""
    raw: str
    """The judge's reply."""


@dataclass(frozen=True)
class RecallOnDraft:
    """One configuration's recall on draft."""

    label: str
    """``strategy(args) · actor / critic``."""
    redraft: Rate
    """Pairs judged changed, of the readable ones after a ``redraft`` suggestion: the recall on draft."""
    refine: Rate
    """The same after a ``refine`` suggestion (how often "keep the approach" still changed it), when judged."""
    unreadable: int
    """Judge answers that could not be read."""


def draft_pairs(store: Store, run_id: str, *, suggestions: Sequence[Suggestion] = ("redraft",)) -> list[DraftPair]:
    """Every (program, next program) of a run where the critic's suggestion on the first is one of
    ``suggestions`` and both programs could be read."""
    pairs = []
    for trajectory in store.trajectory_details(run_id):
        attempts = trajectory.attempts
        for old, new in itertools.pairwise(attempts):
            verdict = old.critic.verdict if old.critic is not None else None
            if verdict in suggestions and verdict is not None and old.code is not None and new.code is not None:
                key = (trajectory.config, trajectory.problem, trajectory.repeat)
                pairs.append(DraftPair(*key, old.index, verdict, old.code, new.code))
    return pairs


def judge_request(pair: DraftPair) -> list[Message]:
    """What the judge is asked: the two programs, nothing else (no problem, no critique)."""
    return [Message.system(JUDGE_SYSTEM), Message.user(JUDGE_TURN.format(old=pair.old.rstrip(), new=pair.new.rstrip()))]


def read_judgement(text: str) -> bool | None:
    """``<changed>yes</changed>`` -> True, ``no`` -> False; anything else -> None. The last tag counts
    (a reasoning model may quote the format before answering)."""
    found = _ANSWER.findall(text)
    return None if not found else found[-1].lower() == "yes"


async def judge_drafts(
    model: Model, pairs: Sequence[DraftPair], config: GenerateConfig = JUDGE_CONFIG
) -> list[Judgement]:
    """The judge's answer on every pair, asked concurrently, in pair order."""

    async def one(pair: DraftPair) -> Judgement:
        completion = await model.generate(judge_request(pair), config)
        return Judgement(pair, read_judgement(completion.text), completion.text)

    return list(await asyncio.gather(*(one(pair) for pair in pairs)))


def recall_on_draft(store: Store, run_id: str, judgements: Sequence[Judgement]) -> list[RecallOnDraft]:
    """Recall on draft per configuration that has judged pairs, in the run's configuration order."""
    found = []
    for configuration in store.configurations(run_id):
        mine = [j for j in judgements if j.pair.config == configuration.key]
        if not mine:
            continue
        label = configuration.label
        found.append(RecallOnDraft(label, _rate(mine, "redraft"), _rate(mine, "refine"), _unreadable(mine)))
    return found


def _rate(judgements: Sequence[Judgement], suggestion: Suggestion) -> Rate:
    readable = [j for j in judgements if j.pair.suggestion == suggestion and j.changed is not None]
    return Rate(sum(bool(j.changed) for j in readable), len(readable))


def _unreadable(judgements: Sequence[Judgement]) -> int:
    return sum(j.changed is None for j in judgements)
