"""The value codec, both sides: values as JSON-safe data tagged by exact builtin type.

The child encodes what a test's expression returned (:func:`encode`) and rebuilds what tests see from
exact builtins (:func:`plain`); the host decodes (:func:`decode`) and encodes trusted expected values
the same way for storage (:func:`encode_expected`). An object that overrides ``__eq__`` cannot pass for
the expected value, because what crosses to the host is data rebuilt from exact builtins; subclasses of
builtins are converted to their base type without calling their overridden methods, and decoding builds
builtins only, so it never runs candidate code.

Tags (a one-key object): ``I`` an integer beyond 2**53 (hex), ``F`` a non-finite float (repr), ``T``
tuple, ``S`` set, ``Z`` frozenset, ``D`` dict (a list of pairs), ``B`` bytes (hex), ``C`` complex,
``M`` a ``Decimal`` (its string), ``Q`` a ``Fraction`` (hex numerator and denominator), ``O`` a value
of another type (its type's name), ``H`` a long string a test returned, as its SHA-256 digest, its length
and its first characters, ``J`` a long list of numbers a test returned, as its JSON text and that text's
SHA-256 digest (both :func:`digested`: the host compares digests; neither stands for an expected value).
This module imports only the standard library: the worker runs it inside the sandbox.

Values of a few trusted non-builtin types compare as the interpreter compares them: numpy scalars
(``numpy.int64(3) == 3``) become the Python scalar they hold, ``Decimal`` and ``Fraction`` keep their
value, dict views and other iterables stay iterable (``list(candidate(x)) == [...]``). Trust rests on
the type, never on the value's own methods: numpy's scalar types are static C types, ``Decimal`` is
immutable, and ``Fraction`` is used only while its class is as the worker found it.
"""

from __future__ import annotations

import collections
import decimal
import fractions
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

_HEAP_TYPE = 1 << 9
"""``Py_TPFLAGS_HEAPTYPE``: set on every class made by Python code, clear on C extensions' static types."""
_SCALARS = (bool, int, float, complex, str, bytes)
_DECIMAL = decimal.Decimal
_FRACTION = fractions.Fraction
_FRACTION_CLASS = dict(vars(_FRACTION))  # as the worker found it, before any candidate ran
_NUMERATOR, _DENOMINATOR = _FRACTION_CLASS["_numerator"], _FRACTION_CLASS["_denominator"]
_DEQUE = collections.deque
_EMPTY: dict[object, object] = {}
_KEYS: type = type(_EMPTY.keys())
_VALUES: type = type(_EMPTY.values())
_ITEMS: type = type(_EMPTY.items())
_SHA256 = hashlib.sha256
DIGEST_CHARS = 65536
"""A string a test returned at least this long travels as its digest (:func:`digested`)."""
HEAD_CHARS = 300
"""Characters of a digested string kept for messages."""
TEXT_ITEMS = 256
"""A list a test returned with at least this many items, numbers or lists, is written out to see if it travels
as text (``J``): it does when the text is :data:`TEXT_CHARS` long or more."""
TEXT_CHARS = 4096
"""The host packs an expected value of more JSON than this (``_outputs.PACK_BYTES``): a right answer that long
is judged against a packed value, which a digest settles."""
_TEXT_ITEMS = frozenset({int, float, bool, type(None), list})
DEEPEST_TEXT = 320
"""Containers a ``J`` text may nest (a child's ``encode`` stops at 100 levels): the host reads none deeper."""


def _json_encoder() -> Callable[[object], str]:
    """``json.dumps``, without its per-call work: the C encoder ``json.dumps`` builds at every call, built once
    (half of the 6.5 us a report took to encode; a benchmark's check writes a report per test), and not
    replaced when a program replaces names: ``json.dumps`` looks its encoder up in ``json.encoder`` at each
    call, where a program in the same child could put its own. Without the circularity check ``json.dumps``
    makes: what it writes is what ``encode`` made, a fresh tree."""
    make: Callable[..., Callable[[object, int], Iterable[str]]] | None = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C encoder in this Python
        return json.dumps
    probe: dict[str, object] = {"text": "\u00e9", "items": [1, 2.5, None, True, {"tag": "nan"}], "at": [0, 0.1]}
    # markers (None: no circularity check), default, encoder, indent, key and item separators, sort_keys,
    # skipkeys, allow_nan: what json.dumps builds with its defaults
    settings = (None, None, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True)
    try:
        encode = make(*settings)
        if "".join(encode(probe, 0)) == json.dumps(probe):
            return lambda message: "".join(encode(message, 0))
    except TypeError:  # made otherwise in this Python
        pass
    return json.dumps


JSON_TEXT = _json_encoder()
"""``json.dumps`` with its defaults, built once (see :func:`_json_encoder`): a report's line, a ``J`` value's text."""


def encode(value: Any, depth: int = 0) -> object:
    """Encode a value as JSON-safe data tagged by its exact builtin type."""
    if depth > 100:
        return {"O": "<too deep>"}
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -(2**53) < value < 2**53 else {"I": hex(value)}
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"F": repr(value)}
    if kind is list:
        flat = _flat(value) if depth < 100 else None
        return flat if flat is not None else [encode(item, depth + 1) for item in value]
    return _encode_other(value, kind, depth)


PLAIN = frozenset({str, bool, type(None), int, float})
"""The types JSON carries as they are: a list of them, as a worker sent it, decodes to a copy of itself."""
_NUMBERS = frozenset({int, float})


def _flat(value: list[Any]) -> list[Any] | None:
    """A copy of ``value`` when each item is a scalar JSON carries as it is (strings, booleans, None,
    integers within 2**53, finite floats), checked in a few passes at C speed instead of a call per item:
    what :func:`encode` would return. ``None`` otherwise (mixed numbers and other scalars included), for the
    item by item way. The copy is made first and checked, so no other thread of the program can change what
    was checked."""
    items = list(value)
    kinds = set(map(type, items))
    if not kinds <= PLAIN:
        return None
    if kinds & _NUMBERS:
        if kinds - _NUMBERS:
            return None
        try:
            if not all(map(math.isfinite, items)):
                return None
        except OverflowError:  # an integer too large for a float
            return None
        if int in kinds and not -(2**53) < min(items) <= max(items) < 2**53:
            return None
    return items


def _encode_other(value: Any, kind: type, depth: int) -> object:
    tags = {tuple: "T", set: "S", frozenset: "Z"}
    if kind in tags:
        return {tags[kind]: [encode(item, depth + 1) for item in value]}
    if kind is dict:
        return {"D": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if kind is bytes:
        return {"B": value.hex()}
    if kind is complex:
        return {"C": [encode(value.real, depth + 1), encode(value.imag, depth + 1)]}
    base = _builtin_base(value)
    if base is not None:
        return encode(base, depth)
    return _encode_trusted(value, kind, depth)


def _encode_trusted(value: Any, kind: type, depth: int) -> object:
    """Numpy scalars, ``Decimal``, ``Fraction``, set-like dict views and ``bytearray`` by value."""
    scalar = numpy_scalar(value, kind)
    if scalar is not None:
        return encode(scalar, depth)
    if kind is _DECIMAL:
        return {"M": str(value)}
    if kind is _FRACTION and fraction_intact():
        return {"Q": [hex(_NUMERATOR.__get__(value)), hex(_DENOMINATOR.__get__(value))]}
    if kind is _KEYS or kind is _ITEMS:  # equal to sets, as the views are
        return {"S": [encode(item, depth + 1) for item in value]}
    if kind is bytearray:
        return {"B": bytes(value).hex()}
    return {"O": kind.__qualname__}


def numpy_scalar(value: Any, kind: type) -> object:
    """The Python scalar a numpy scalar holds (``numpy.generic.item``); None for anything else.

    Only numpy's own static types qualify (a class written in Python cannot pose as one), and the
    conversion is numpy's C method, not one the value could override.
    """
    if kind.__flags__ & _HEAP_TYPE or kind.__module__ != "numpy":
        return None
    generic = next((k for k in kind.__mro__ if k.__name__ == "generic" and not k.__flags__ & _HEAP_TYPE), None)
    if generic is None or generic.__module__ != "numpy":
        return None
    item = vars(generic)["item"](value)
    return item if type(item) in _SCALARS else None


def fraction_intact() -> bool:
    """True while ``fractions.Fraction`` is the class the worker imported (no method replaced)."""
    current = vars(_FRACTION)
    return len(current) == len(_FRACTION_CLASS) and all(current.get(k) is v for k, v in _FRACTION_CLASS.items())


def _builtin_base(value: Any) -> object:
    """Convert an instance of a builtin subclass to the builtin, bypassing overridden methods."""
    converters: tuple[tuple[type, Any], ...] = (
        (bool, bool.__bool__),
        (int, int.__int__),
        (float, float.__float__),
        (str, str.__str__),
        (bytes, bytes),
        (tuple, tuple.__iter__),
        (list, list.__iter__),
        (dict, dict.items),
        (frozenset, frozenset.__iter__),
        (set, set.__iter__),
    )
    for base, convert in converters:
        if isinstance(value, base):
            converted = convert(value)
            if base in (tuple, list, frozenset, set):
                return base(list(converted))
            if base is dict:
                return dict(list(converted))
            return converted
    return None


class StandIn:
    """Stands in, inside the child, for a value of a non-builtin type; equal to nothing but itself."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


_EXACT = frozenset({bool, int, float, str, bytes, complex, type(None)})
"""Types :func:`plain` gives back as they are."""


def plain(value: Any, depth: int = 0) -> object:
    """Rebuild a value from exact builtins (what a test sees when it calls the candidate)."""
    kind = type(value)
    if value is None or kind in _EXACT:
        return value
    if kind is list:
        return _plain_list(list(value), depth)
    if depth > 100:
        return StandIn("<too deep>")
    if kind in (tuple, set, frozenset):
        items = list(value)
        if kind is not set and _exact(items):
            return value  # immutable, and every item is immutable too
        return kind(_plain_list(items, depth))
    if kind is dict:
        copy = dict(value)
        if _exact(copy) and _exact(copy.values()):
            return copy
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in copy.items()}
    base = _builtin_base(value)
    if base is not None:
        return plain(base, depth)
    return _plain_trusted(value, kind, depth)


def _exact(items: Iterable[Any]) -> bool:
    """Whether every item is of a type :func:`plain` gives back as it is (checked at C speed: no call per item)."""
    return set(map(type, items)) <= _EXACT


def _plain_list(items: list[Any], depth: int) -> list[Any]:
    """``items`` (a copy of the candidate's container, so no other thread of the program can change it after
    it is checked) rebuilt from exact builtins: as it is where every item already is one (a million numbers
    in a few milliseconds, not a call each)."""
    return items if _exact(items) else [plain(item, depth + 1) for item in items]


def _plain_trusted(value: Any, kind: type, depth: int) -> object:
    """Numpy scalars as Python scalars, exact ``Decimal``/``Fraction``/``range`` as they are, dict
    views, deques and other iterables rebuilt from plain items; anything else a stand-in."""
    scalar = numpy_scalar(value, kind)
    if scalar is not None:
        return scalar
    if kind is _DECIMAL or kind is range or (kind is _FRACTION and fraction_intact()):
        return value
    if kind is bytearray:
        return bytearray(value)
    if kind is _KEYS:
        return dict.fromkeys(plain(k, depth + 1) for k in value).keys()
    if kind is _ITEMS:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value}.items()
    if kind is _VALUES:
        return dict(enumerate(plain(v, depth + 1) for v in value)).values()
    if kind is _DEQUE:
        return _DEQUE((plain(item, depth + 1) for item in value), value.maxlen)
    if hasattr(kind, "__iter__"):
        return _plain_items(value, depth)
    return StandIn(kind.__qualname__)


def _plain_items(value: Any, depth: int) -> Iterator[object]:
    """A generator, an iterator or another iterable, still lazy, yielding plain items: ``list()``,
    ``sorted()`` and ``next()`` work as on the original, and equality is never the candidate's."""
    for item in value:
        yield plain(item, depth + 1)


class Opaque:
    """A decoded value of a non-builtin type the candidate returned (host side); equal to nothing."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def string_digest(text: str) -> str:
    """SHA-256 of a string's characters, in hex (lone surrogates included: each string has its own bytes)."""
    return _SHA256(text.encode("utf-8", "surrogatepass")).hexdigest()


def digested(encoded: object) -> object:
    """A test's encoded value as it travels: a string of :data:`DIGEST_CHARS` or more as ``{"H": [digest, length,
    head]}``; a list of :data:`TEXT_ITEMS` items or more whose JSON is :data:`TEXT_CHARS` long or more and
    holds no string or tag (numbers, booleans, ``null`` and such lists) as ``{"J": [digest, text]}``; anything
    else as it is. HumanEval/15's right answers are 4 MB strings: each crossed two pipes and was encoded and
    decoded three times, where its digest is what the host compares anyway. A list of a million numbers as
    text is read by the worker and the host as one string instead of a million numbers, and a host whose
    expected value has that digest need not read it at all (see ``Packed.has_encoding``). The text is the
    list's own JSON character for character (no quote in it: escaping it adds nothing), so what the child
    sends grows by the digest alone."""
    if isinstance(encoded, str):  # encode() made it: exactly a str
        if len(encoded) < DIGEST_CHARS:
            return encoded
        return {"H": [string_digest(encoded), len(encoded), encoded[:HEAD_CHARS]]}
    if not isinstance(encoded, list) or len(encoded) < TEXT_ITEMS or not set(map(type, encoded)) <= _TEXT_ITEMS:
        return encoded  # exactly a list, likewise; its items' types checked at C speed
    text = JSON_TEXT(encoded)
    if len(text) < TEXT_CHARS or '"' in text:
        return encoded
    return {"J": [_SHA256(text.encode()).hexdigest(), text]}


def text_of(data: object) -> tuple[str, str] | None:
    """A ``J`` value's digest and text as it came (unread); None for any other value."""
    if type(data) is not dict or len(data) != 1:
        return None
    body = cast("dict[str, object]", data).get("J")
    if type(body) is list and len(body) == 2 and type(body[0]) is str and type(body[1]) is str:
        return body[0], body[1]
    return None


class Digested:
    """A long string a test returned, as its digest (tag ``H``): equal to a string with the same characters."""

    __slots__ = ("digest", "head", "length")

    def __init__(self, digest: str, length: int, head: str) -> None:
        self.digest, self.length, self.head = digest, length, head

    def __eq__(self, other: object) -> bool:
        if type(other) is str:
            return len(other) == self.length and string_digest(other) == self.digest
        return NotImplemented  # a packed expected value answers for itself

    __hash__ = None  # type: ignore[assignment]  # like the string it stands for, in a test

    def __repr__(self) -> str:
        return f"{self.head!r}... ({self.length} characters)"


def decode(data: object) -> object:
    """Rebuild a value from its tagged encoding (host side), from builtins only."""
    if isinstance(data, list):  # scalars decode to themselves: no call per item
        return list(data) if set(map(type, data)) <= PLAIN else [decode(item) for item in data]
    if not isinstance(data, dict) or len(data) != 1:
        return data
    ((tag, body),) = data.items()
    if tag in ("T", "S", "Z", "D") and isinstance(body, list):
        return _decode_container(tag, body)
    if tag == "I" and isinstance(body, str):
        return int(body, 16)
    if tag == "F" and isinstance(body, str):
        return float(body)
    if tag == "B" and isinstance(body, str):
        return bytes.fromhex(body)
    if tag in ("M", "Q"):
        return _decode_exact(tag, body)
    return _decode_other(tag, body)


def _decode_other(tag: str, body: object) -> object:
    """A digested string (``H``), a list as text (``J``), a complex number (``C``), or an opaque value."""
    if tag == "J":  # only ever a whole value (decode_sent): inside one, a forged report's
        return Opaque("J inside a value")
    if tag == "H" and isinstance(body, list) and len(body) == 3:
        digest, length, head = body
        if type(digest) is str and type(length) is int and type(head) is str:
            return Digested(digest, length, head)
    if tag == "C" and isinstance(body, list) and len(body) == 2:
        real, imag = decode(body[0]), decode(body[1])
        if isinstance(real, (int, float)) and isinstance(imag, (int, float)):
            return complex(real, imag)
    return Opaque(str(body))


def decode_sent(data: object) -> object:
    """A test's value as the child sent it (:func:`digested`): a ``J`` value, which is only ever a whole value,
    read from its text; anything else as :func:`decode` reads it (a ``J`` inside a value is opaque: were it
    read there, its depth would add to the depth the worker let through, past the host's stack)."""
    if type(data) is dict and len(data) == 1 and "J" in data:
        found = text_of(data)
        return Opaque("malformed J") if found is None else _decode_text(found[1])
    return decode(data)


def _decode_text(text: str) -> object:
    """The list a ``J`` value's text writes (its digest unchecked: the text is what was sent), or an opaque value
    where the text is no JSON, holds a quote or nests deeper than :data:`DEEPEST_TEXT` (a child never sends
    such a text: a program that wrote the report itself did)."""
    if '"' in text:
        return Opaque("malformed J")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return Opaque("malformed J")
    return decode(data) if within(data, DEEPEST_TEXT) else Opaque("too deep")


def within(value: object, levels: int) -> bool:
    """Whether ``value`` nests at most ``levels`` lists and dicts (a list of scalars checked at C speed; the
    recursion stops at ``levels``, however deep the value goes)."""
    if type(value) is list:
        if levels <= 0:
            return False
        if set(map(type, cast("list[object]", value))) <= PLAIN:
            return True
        items: Iterable[object] = cast("list[object]", value)
    elif type(value) is dict:
        if levels <= 0:
            return False
        items = cast("dict[str, object]", value).values()
    else:
        return True
    for item in items:
        kind = type(item)
        if (kind is list or kind is dict) and not within(item, levels - 1):
            return False
    return True


def _decode_exact(tag: str, body: object) -> object:
    """A ``Decimal`` (``M``: its string) or a ``Fraction`` (``Q``: hex numerator and denominator)."""
    try:
        if tag == "M" and isinstance(body, str):
            return _DECIMAL(body)
        if tag == "Q" and isinstance(body, list) and len(body) == 2 and all(isinstance(x, str) for x in body):
            return _FRACTION(int(body[0], 16), int(body[1], 16))
    except (ArithmeticError, ValueError):
        pass
    return Opaque(f"malformed {tag}")


def _decode_container(tag: str, body: list[object]) -> object:
    if tag == "D":
        pairs = [pair for pair in body if isinstance(pair, list) and len(pair) == 2]
        return {_hashable(decode(k)): decode(v) for k, v in pairs}
    items = [decode(item) for item in body]
    if tag == "T":
        return tuple(items)
    hashable = [_hashable(item) for item in items]
    return set(hashable) if tag == "S" else frozenset(hashable)


def _hashable(value: object) -> object:
    return value if value.__hash__ is not None else Opaque(type(value).__name__)


def encode_expected(value: object) -> object:
    """Encode a trusted expected value as the child encodes results (host side, for storage).

    Raises:
        TypeError: the value holds something other than builtins (it could not be compared).
    """
    encoded = encode(value)
    if holds_opaque(encoded):
        raise TypeError(f"cannot store expected value of type {type(value).__name__}")
    return encoded


def holds_opaque(data: object) -> bool:
    """Whether an encoding holds a value of a type the codec does not carry (``O``): such a value cannot be
    an expected one (it could not be compared)."""
    if isinstance(data, list):
        return not set(map(type, data)) <= PLAIN and any(holds_opaque(item) for item in data)
    if not isinstance(data, dict):
        return False
    ((tag, body),) = data.items()
    return tag == "O" or holds_opaque(body)
