"""A local completion's text decided as llama-cpp-python's ``create_completion`` decides it (no model needed):
the end-of-generation token, stop sequences in list order, the token cap, and an incomplete UTF-8 character
postponing both checks."""

from __future__ import annotations

from refinelab.models._local_text import CompletionText


def feed(text: CompletionText, pieces: list[bytes], end: int | None = None) -> int:
    """Push pieces as tokens 0, 1, ...; token ``end`` is the end of generation. How many were pushed."""
    for token, piece in enumerate(pieces):
        if text.push(token, piece, end_of_generation=token == end):
            return token + 1
    return len(pieces)


def test_the_end_of_generation_token_stops_and_is_not_counted() -> None:
    text = CompletionText(10, [])
    assert feed(text, [b"def", b" f", b"", b"never"], end=2) == 3
    assert (text.reply, text.tokens, text.finish_reason) == ("def f", [0, 1], "stop")


def test_the_first_stop_of_the_list_wins_not_the_earliest_in_the_text() -> None:
    text = CompletionText(10, [b"C", b"A"])
    feed(text, [b"xA", b"yC", b"z"])
    assert (text.reply, text.finish_reason, len(text.tokens)) == ("x", "stop", 1)  # "A" arrived first
    both = CompletionText(10, [b"C", b"A"])
    feed(both, [b"xAyC"])  # in the text together: the list's order decides, as in llama-cpp-python
    assert both.reply == "xAy"


def test_the_cap_ends_the_completion_as_length() -> None:
    text = CompletionText(3, [b"never"])
    assert feed(text, [b"a", b"b", b"c", b"d"]) == 3
    assert (text.reply, text.finish_reason) == ("abc", "length")


def test_an_incomplete_character_postpones_the_stop_and_the_cap() -> None:
    euro = "€".encode()  # three bytes: a token may end inside it
    text = CompletionText(2, [b"x"])
    assert feed(text, [b"x" + euro[:1], euro[1:2], euro[2:]]) == 3  # the cap (2) and the stop wait for it
    assert (text.finish_reason, text.reply, len(text.tokens)) == ("stop", "", 3)
    cut = CompletionText(1, [])
    feed(cut, [euro[:2], b"", b""])
    assert cut.reply == "" and cut.finish_reason == "length"  # invalid UTF-8 is dropped from the reply


def test_a_full_context_ends_the_text_as_it_is() -> None:
    text = CompletionText(100, [])
    feed(text, [b"a", b"b"])
    text.end("length")
    assert (text.reply, text.finish_reason) == ("ab", "length")
