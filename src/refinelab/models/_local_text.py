"""A local completion's text as tokens arrive, decided exactly as llama-cpp-python's ``create_completion``
decides it, so a reply from the batched engine is byte for byte the one llama-cpp-python gives for the same
tokens: the end-of-generation token stops without being counted, a stop sequence (the first of the list
found in the text, not the earliest in it) cuts the text where it starts, a cap on tokens ends it as
``length``, and an incomplete UTF-8 character at the end of the text postpones both checks until it is
complete (llama-cpp-python's own rule, quirks included: it can run past the cap by a token or two)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

FinishReason = Literal["stop", "length"]

_LEADS = ((2, 0xC0), (3, 0xE0), (4, 0xF0))
"""UTF-8 lead bytes (all the bits of the pattern set) and the length of the character they start."""


@dataclass
class CompletionText:
    """The completion of one sequence so far; :meth:`push` each sampled token until it says it is done."""

    max_tokens: int
    """The cap on completion tokens."""
    stop: Sequence[bytes]
    """Stop sequences, in the order given (the first found wins, as in llama-cpp-python)."""
    tokens: list[int] = field(default_factory=list)
    """The completion's tokens (an end-of-generation token is not one of them)."""
    text: bytes = b""
    """The text of every token so far, untrimmed."""
    finish_reason: FinishReason | None = None
    """Why it ended; ``None`` while it goes on."""
    cut: int | None = None
    """Where a stop sequence starts in :attr:`text` (the reply ends there)."""
    _incomplete: int = 0

    def push(self, token: int, piece: bytes, *, end_of_generation: bool) -> bool:
        """Add a sampled token (its text ``piece``); True when the completion is finished."""
        if end_of_generation:
            self.finish_reason = "stop"
            return True
        self.tokens.append(token)
        self.text += piece
        self._note_incomplete_character()
        if self._incomplete > 0:
            self._incomplete -= 1
            return False
        found = [s for s in self.stop if s in self.text]
        if found:
            self.cut, self.finish_reason = self.text.index(found[0]), "stop"
            return True
        if len(self.tokens) >= self.max_tokens:
            self.finish_reason = "length"
            return True
        return False

    def end(self, reason: FinishReason) -> None:
        """Finish now (the context is full), keeping the text as it is."""
        self.finish_reason = reason

    @property
    def reply(self) -> str:
        """The reply's text: up to the stop sequence, invalid UTF-8 dropped (as llama-cpp-python decodes)."""
        return self.text[: self.cut].decode("utf-8", errors="ignore")

    def _note_incomplete_character(self) -> None:
        # llama-cpp-python's check, kept as it is written: over the last three bytes, a lead byte whose
        # character needs more bytes than remain after it sets how many tokens to wait
        for index, byte in enumerate(self.text[-3:]):
            remaining = 3 - index
            for length, pattern in _LEADS:
                if length > remaining and pattern & byte == pattern:
                    self._incomplete = length - remaining
