"""Large expected values kept compressed until a comparison needs them.

HumanEval+ has expected outputs of several megabytes (``string_sequence(n)`` for large ``n``, ``tri(n)``
lists of a million numbers): 300 MB of JSON over the benchmark, over 700 MB once decoded. Each large
value is held as its sandbox encoding (see ``_worker/codec.py``), zlib-compressed, with its size and a
short preview, and is decoded only while a candidate's value is compared with it. It compares equal to
a value exactly when the decoded expected value matches it as the judge would match them
(``values_match``: ``==``, or within ``atol`` for values holding floats): Python asks
``Packed.__eq__`` when the candidate's value does not know how to compare itself with it. A large
string is decoded once, at its first comparison; from then on it is compared by a SHA-256 digest kept
beside it (32 bytes), so the many right programs that return it cost a hash each, not a decoding.

A value packed in the sandbox crosses as base64 text and stays so on a :class:`Shelf`, the cache's file of
packed values: it is not decoded, nor held in memory, until a comparison needs its bytes (HumanEval+'s 374
packed values are 95 MB compressed; most are never read again, since a right answer matches by its digest).
"""

from __future__ import annotations

import binascii
import hashlib
import json
import os
import weakref
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from refinelab.errors import InfrastructureError
from refinelab.sandbox._compare import values_match
from refinelab.sandbox._worker.codec import Digested, decode

NANS = ('{"F": "nan"}', 'NaN"}')
"""How a NaN looks in the codec's JSON: a float's tag, and a ``Decimal``'s (``NaN``, ``-NaN``, ``sNaN``)."""
PREVIEW = 300
"""Characters of ``repr`` kept for messages (the judge shows at most this many)."""


class Shelf:
    """A file of packed values' compressed bytes, each as base64 text, kept open while any value on it lives: a
    value there is read where a comparison needs its bytes. The file may be removed meanwhile (another writing of
    the same cache removes files it does not name): what is open stays readable."""

    __slots__ = ("__weakref__", "_fd", "path", "size")

    def __init__(self, fd: int, path: Path | None = None) -> None:
        self._fd = fd
        self.path = path
        """Where it was opened (for messages; it may be gone since)."""
        self.size = os.fstat(fd).st_size
        """Its length in bytes (what was there when it was opened, and what was put since)."""
        weakref.finalize(self, os.close, fd)

    @classmethod
    def create(cls, path: Path) -> Shelf:
        """A new, empty file at ``path`` (an ``OSError`` where one is there)."""
        return cls(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644), path)

    @classmethod
    def open(cls, path: Path) -> Shelf:
        """The file at ``path``, to read (an ``OSError`` where it cannot be opened)."""
        return cls(os.open(path, os.O_RDONLY | os.O_CLOEXEC), path)

    def put(self, text: bytes) -> int:
        """Append ``text``; where it starts."""
        at = self.size
        view = memoryview(text)
        while view:
            view = view[os.pwrite(self._fd, view, at + len(text) - len(view)) :]
        self.size += len(text)
        return at

    def read(self, at: int, count: int) -> bytes:
        """The ``count`` bytes from ``at``; a ``ValueError`` where the file does not hold them all."""
        if at < 0 or count < 0 or at + count > self.size:
            raise ValueError(f"the packed values' file holds no {count} bytes at {at}")
        found = os.pread(self._fd, count, at)
        if len(found) != count:
            raise ValueError(f"the packed values' file ends before {at + count}")
        return found

    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("a Shelf is an open file of this process: it does not cross to another")


@dataclass(frozen=True)
class Place:
    """Where a packed value's base64 text is."""

    shelf: Shelf
    at: int
    """Where it starts."""
    count: int
    """How many bytes it is."""
    crc: int
    """Their CRC-32."""


class Packed:
    """A compressed expected value; see the module docstring."""

    __slots__ = ("_blob", "_encoding", "_place", "_string", "atol", "preview", "size")

    def __init__(  # noqa: PLR0913 - the value's parts, each kept as it is given
        self,
        blob: bytes | None,
        size: int,
        preview: str,
        atol: float | None = None,
        *,
        string: bytes | bool | None = False,
        encoding: str | None = None,
        place: Place | None = None,
    ) -> None:
        if (blob is None) == (place is None):
            raise ValueError("a packed value is its bytes or a place on a shelf, one of the two")
        self._blob = blob
        """zlib-compressed JSON of the sandbox encoding, where it is held here (:attr:`blob`)."""
        self._place = place
        """Where it is on a shelf instead, as base64 (:class:`Shelf`)."""
        self.size = size
        """Length of that JSON, uncompressed (what a worker sends back for an equal value)."""
        self.preview = preview
        """``repr`` of the value, cut to :data:`PREVIEW` characters."""
        self.atol = atol
        """Float tolerance of the comparison (``None``: ``==``); see ``values_match``."""
        self._string: bytes | bool | None = string
        """The value's :func:`_digest` when it is a string, ``None`` when it is not, ``False`` until known
        (where it was packed, that is known: a first comparison need not undo the compression)."""
        self._encoding: str | None = encoding
        """The SHA-256 (hex) of the encoding's JSON ("": it holds a NaN), where it was packed (the sandbox packs
        HumanEval+'s values so), read from a cache, or once :meth:`has_encoding` worked it out; ``None`` until
        then."""

    @classmethod
    def shelved(  # noqa: PLR0913 - what the sandbox sent of the value, each kept as it is given
        cls,
        shelf: Shelf,
        text: str,
        size: int,
        preview: str,
        atol: float | None,
        *,
        string: bytes | bool | None,
        encoding: str,
    ) -> Packed:
        """A value the sandbox packed (its compressed bytes as base64 ``text``), put on ``shelf`` as it came: not
        decoded until a comparison needs it. A ``ValueError`` where ``text`` is not ASCII."""
        data = text.encode("ascii")
        at = shelf.put(data)
        place = Place(shelf, at, len(data), zlib.crc32(data))
        return cls(None, size, preview, atol, string=string, encoding=encoding, place=place)

    @property
    def blob(self) -> bytes:
        """zlib-compressed JSON of the sandbox encoding (read from its shelf, where it is there: not kept); an
        :class:`InfrastructureError` where the shelf no longer holds what was put there."""
        if self._blob is not None:
            return self._blob
        place = cast("Place", self._place)
        shelf, at, count = place.shelf, place.at, place.count
        try:
            text = shelf.read(at, count)
            if zlib.crc32(text) == place.crc:
                return from_base64(text)
        except (OSError, ValueError):
            pass
        where = shelf.path or "the file of packed values"
        raise InfrastructureError(f"{where}: changed since it was read (bytes {at} to {at + count}); remove it")

    @classmethod
    def of(cls, encoded: object, value: object, *, text: str | None = None, atol: float | None = None) -> Packed:
        """Pack a value given with its sandbox encoding (and that encoding's JSON, if already made)."""
        text = json.dumps(encoded) if text is None else text
        string = _digest(value) if type(value) is str else None
        return cls(zlib.compress(text.encode(), 1), len(text), _preview(value), atol, string=string)

    def value(self) -> object:
        """The decoded value (a fresh copy each time)."""
        return decode(json.loads(zlib.decompress(self.blob)))

    def encodes_as(self, encoded: object) -> bool:
        """True when ``encoded`` (a worker's encoding of a candidate's value) is this value's own encoding,
        character for character: the two values are then equal, so the judge need not decode either (a
        right program's answer to a large test costs its encoding and a hash, not two decodings of
        megabytes: see :meth:`has_encoding`). False also when they may still match: the judge then compares
        as always. A value holding a NaN (equal to nothing, itself included) never takes this way. The judge
        asks only for containers: a string compares by its digest (see :meth:`_same_string`), cheaper still."""
        text = json.dumps(encoded)
        return len(text) == self.size and self.has_encoding(hashlib.sha256(text.encode()).hexdigest(), len(text))

    def has_encoding(self, digest: str, length: int) -> bool:
        """True when a JSON text of ``length`` characters with SHA-256 ``digest`` (a ``J`` value, see
        ``codec.digested``) is this value's own encoding: the two values are then equal, and neither need be
        read (HumanEval/130's right answers are ten lists of a million numbers, 20 MB of JSON each). The digest
        of the value's encoding is worked out at the first ask (the compression undone once) and kept. False
        also when they may still match (``1`` and ``1.0``, a tolerance), and for a value holding a NaN."""
        if length != self.size:
            return False
        if self._encoding is None:
            text = zlib.decompress(self.blob)
            self._encoding = "" if any(nan.encode() in text for nan in NANS) else hashlib.sha256(text).hexdigest()
        return bool(self._encoding) and digest == self._encoding

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Packed):
            return (self.blob, self.atol) == (other.blob, other.atol)
        if type(other) is str and self._string is not None:
            return self._same_string(other)
        if type(other) is Digested:
            return self._same_digest(other)
        return values_match(other, self.value(), self.atol)

    def _same_string(self, text: str) -> bool:
        """Whether ``text`` is the value, when the value may be a string: by digest, worked out at the first
        comparison and kept (``_string`` is None from then on if the value is no string).

        Two strings match exactly when they are equal, tolerance or not. HumanEval/15's 4 MB answers, met
        by every right program, cost 5 ms each this way instead of the 27 ms of undoing the compression and
        decoding (the driver judged 180 of them in 3.6 s of its CPU).
        """
        if self._string is False:
            value = self.value()
            if type(value) is not str:
                self._string = None
                return values_match(text, value, self.atol)
            self._string = _digest(value)
        return _digest(text) == self._string

    def _same_digest(self, other: Digested) -> bool:
        """Whether a long string a test returned, sent as its digest, is the value (a string)."""
        if self._string is False:
            value = self.value()
            self._string = _digest(value) if type(value) is str else None
        return isinstance(self._string, bytes) and self._string.hex() == other.digest

    __hash__ = None  # type: ignore[assignment]  # like the lists and strings it stands for in tests

    def __repr__(self) -> str:
        return self.preview

    def to_json(self, shelf: Shelf) -> dict[str, object]:
        """The cache file's form, its compressed bytes on ``shelf`` (put there as base64, unless they are)."""
        place = self._place
        if place is None or place.shelf is not shelf:
            data = binascii.b2a_base64(self.blob, newline=False)
            place = Place(shelf, shelf.put(data), len(data), zlib.crc32(data))
        kept: dict[str, object] = {"at": place.at, "bytes": place.count, "crc": place.crc}
        kept |= {"size": self.size, "preview": self.preview, "atol": self.atol}
        if self._encoding is not None:
            kept["encoding"] = self._encoding
        if self._string is False:  # not known (read from a cache written before it was kept)
            return kept
        return kept | {"string": self._string.hex() if isinstance(self._string, bytes) else None}

    @classmethod
    def from_json(cls, data: dict[str, object], shelf: Shelf) -> Packed:
        """Read :meth:`to_json`'s form back, its bytes left on ``shelf`` (``string``, the digest of a string
        value: without it, a first comparison works it out); a ``ValueError`` where it is not that, or the bytes
        on the shelf are not those written (their CRC-32, checked now: a values' file of another writing, or
        damaged)."""
        atol = data.get("atol")
        tolerance = float(atol) if isinstance(atol, (int, float)) else None
        at, count, crc = data["at"], data["bytes"], data["crc"]
        if type(at) is not int or type(count) is not int:
            raise ValueError(f"not a place in the packed values' file: {at!r}, {count!r}")
        size, preview = int(str(data["size"])), str(data["preview"])
        if zlib.crc32(shelf.read(at, count)) != crc:
            raise ValueError(f"the packed value's bytes at {at} are not those written")
        encoding = data.get("encoding")  # not kept by a cache written before it was: worked out when asked
        if encoding is not None and not is_encoding_digest(encoding):
            raise ValueError(f"not the digest of a packed value's encoding: {encoding!r}")
        string, known = _kept_digest(data), cast("str | None", encoding)
        return cls(None, size, preview, tolerance, string=string, encoding=known, place=Place(shelf, at, count, crc))

    def __reduce__(self) -> tuple[object, ...]:
        """A copy that holds its bytes (a shelf is this process's open file)."""
        return (_held, (self.blob, self.size, self.preview, self.atol, self._string, self._encoding))


def _held(
    blob: bytes, size: int, preview: str, atol: float | None, string: bytes | bool | None, encoding: str | None
) -> Packed:
    return Packed(blob, size, preview, atol, string=string, encoding=encoding)


def _kept_digest(data: dict[str, object]) -> bytes | bool | None:
    """What a cache entry says of its value being a string (see :meth:`Packed.to_json`); ``False``: nothing, or
    nothing readable (worked out at the first comparison, as without it)."""
    return read_digest(data["string"]) if "string" in data else False


def from_base64(text: object) -> bytes:
    """The bytes base64 text stands for, decoded from the text as it is (``base64.b64decode`` first copies a
    string into bytes); a ``ValueError`` where it is not base64."""
    if not isinstance(text, (str, bytes)):
        raise ValueError(f"base64 text expected, found {type(text).__name__}")
    return binascii.a2b_base64(text)


def is_encoding_digest(written: object) -> bool:
    """Whether ``written`` is what :attr:`Packed._encoding` keeps: a SHA-256 in lowercase hex, or "" (a NaN)."""
    return written == "" or (isinstance(written, str) and len(written) == 64 and set(written) <= _HEX)


_HEX = frozenset("0123456789abcdef")


def read_digest(written: object) -> bytes | bool | None:
    """A string value's SHA-256 written in hex (``None``: the value is no string; ``False``: not a digest)."""
    if written is None:
        return None
    try:
        return bytes.fromhex(written) if isinstance(written, str) and len(written) == 64 else False
    except ValueError:
        return False


def _digest(text: str) -> bytes:
    """SHA-256 of a string's characters (lone surrogates included: each string has its own bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _preview(value: object) -> str:
    # a long list's repr starts like the repr of its first PREVIEW items (each takes at least 3 characters)
    head = value[:PREVIEW] if isinstance(value, (list, tuple)) and len(value) > PREVIEW else value
    try:
        text = repr(head)
    except ValueError:  # an integer too long for decimal conversion
        return f"<{type(value).__name__} too large to print>"
    return text if len(text) <= PREVIEW else text[: PREVIEW - 3] + "..."
