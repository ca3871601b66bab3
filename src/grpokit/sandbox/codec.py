"""Type-strict values over a byte channel, and length-prefixed framing.

The sandboxed program sends the values its functions return to the grader as
data, never as objects: only exact builtin types are encoded (an `int`
subclass whose `__eq__` always says True is not an `int` here), and the grader
decodes them with `json` into fresh builtin objects it owns. Anything else
travels as an opaque reference that compares equal only to itself.

Framing: a 4-byte big-endian length, then that many bytes of UTF-8 JSON.
"""
from __future__ import annotations

import binascii
import json
import math
import os
import struct
import sys

MAX_FRAME = 32 * 1024 * 1024  # a frame larger than this is a protocol error
# A reply from a program, decoded in the grader, may take ~25x its size in memory
# (a frame of nested empty lists): the cap keeps a grader within its memory limit.
MAX_REPLY = 8 * 1024 * 1024
_MAX_DEPTH = 200
HEADER = struct.Struct("!I")


class Unencodable(Exception):
    """The value is not plain data (or is too deep/large to send as data)."""


class ProtocolError(Exception):
    """The peer sent bytes that are not a valid frame or value."""


def encode(value, depth: int = 0):
    """A JSON-able tagged form of `value`; raises Unencodable for non-data."""
    if depth > _MAX_DEPTH:
        raise Unencodable("nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        if value.bit_length() > 10_000:  # str(int) refuses very long ints
            raise Unencodable("int too large")
        return value
    if kind is float:
        return value if math.isfinite(value) else {"~": "float", "v": repr(value)}
    if kind is list:
        return [encode(v, depth + 1) for v in value]
    if kind is tuple:
        return {"~": "tuple", "v": [encode(v, depth + 1) for v in value]}
    if kind is dict:
        return {"~": "dict", "v": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if kind is set or kind is frozenset:
        return {"~": kind.__name__, "v": [encode(v, depth + 1) for v in value]}
    if kind is bytes:
        return {"~": "bytes", "v": binascii.b2a_base64(value, newline=False).decode("ascii")}
    if kind is complex:
        return {"~": "complex", "v": [encode(value.real), encode(value.imag)]}
    # Honest numpy results (np.int64, arrays) become the plain values they stand for.
    if getattr(kind, "__module__", None) == "numpy" and hasattr(value, "tolist"):
        return encode(value.tolist(), depth + 1)
    return _encode_stdlib(value, kind, depth)


def _stdlib_class(module: str, name: str):
    # The class only if the program imported its module: nothing is imported here.
    return getattr(sys.modules.get(module), name, None)


def _encode_stdlib(value, kind, depth: int):
    """Standard-library value types, sent as their data; the grader rebuilds its own objects."""
    if kind is bytearray:
        return {"~": "bytearray", "v": binascii.b2a_base64(value, newline=False).decode("ascii")}
    if kind in (_stdlib_class("collections", "Counter"), _stdlib_class("collections", "OrderedDict"),
                _stdlib_class("collections", "defaultdict")):
        items = [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in dict.items(value)]
        return {"~": kind.__name__, "v": items}
    if kind is _stdlib_class("fractions", "Fraction"):
        return {"~": "Fraction", "v": [encode(value.numerator), encode(value.denominator)]}
    if kind is _stdlib_class("decimal", "Decimal"):
        return {"~": "Decimal", "v": encode(str(value))}
    if issubclass(kind, tuple) and type(getattr(kind, "_fields", None)) is tuple:
        fields = [encode(f) for f in kind._fields]
        return {"~": "namedtuple", "n": encode(kind.__name__), "f": fields,
                "v": [encode(v, depth + 1) for v in tuple.__iter__(value)]}
    enum = sys.modules.get("enum")
    if enum is not None and issubclass(kind, (enum.IntEnum, enum.IntFlag, getattr(enum, "StrEnum", enum.IntEnum))):
        # Members of int/str enums compare as their values: that is what travels.
        return encode(value._value_, depth + 1)
    raise Unencodable(f"{kind.__name__} is not plain data")


_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def decode(obj, depth: int = 0, refs: dict | None = None):
    """The builtin value for a tagged form; raises ProtocolError on anything odd.

    Runs in the grader on bytes the untrusted program wrote, so it only ever
    builds builtin containers and scalars. `refs` (only on the sandboxed side)
    resolves handles the grader passes back in.
    """
    if depth > _MAX_DEPTH:
        raise ProtocolError("nested too deeply")
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [decode(v, depth + 1, refs) for v in obj]
    if not isinstance(obj, dict) or "~" not in obj:
        raise ProtocolError("untagged object")
    tag, v = obj.get("~"), obj.get("v")
    try:
        if tag == "tuple":
            return tuple(decode(x, depth + 1, refs) for x in v)
        if tag == "dict":
            return {decode(k, depth + 1, refs): decode(x, depth + 1, refs) for k, x in v}
        if tag == "set":
            return {decode(x, depth + 1, refs) for x in v}
        if tag == "frozenset":
            return frozenset(decode(x, depth + 1, refs) for x in v)
        if tag == "bytes":
            return binascii.a2b_base64(v.encode("ascii"), strict_mode=True)
        if tag == "float":
            return _SPECIAL_FLOATS[v]
        if tag == "ref" and refs is not None:
            return refs[v]
        if tag == "complex":
            return complex(float(v[0]), float(v[1]))
        if tag in _STDLIB_TAGS:
            return _STDLIB_TAGS[tag](obj, v, depth, refs)
    except ProtocolError:
        raise
    except Exception as exc:  # unhashable keys, wrong shapes, bad base64 ...
        raise ProtocolError(f"bad {tag!r} value: {exc}") from None
    raise ProtocolError(f"unknown tag {tag!r}")


def _decode_items(v, depth, refs):
    return [(decode(k, depth + 1, refs), decode(x, depth + 1, refs)) for k, x in v]


def _decode_namedtuple(obj, v, depth, refs):
    name, fields = obj.get("n"), obj.get("f")
    if type(name) is not str or type(fields) is not list or len(fields) != len(v):
        raise ProtocolError("bad namedtuple")
    cls = _namedtuple_class(name, tuple(fields))
    return cls(*(decode(x, depth + 1, refs) for x in v))


_NAMEDTUPLES: dict = {}
# The class cache is bounded by the text of its keys, not only their count: a class
# costs ~8x its field names in memory, and a program could send thousands of long
# names per reply (~30 MB of class each) to fill a long-lived grader.
_NAMEDTUPLE_CACHE_CHARS = 64 * 1024
_cached_chars = [0]


def _namedtuple_class(name: str, fields: tuple):
    import collections

    key = (name, fields)
    cls = _NAMEDTUPLES.get(key)
    if cls is None:
        cls = collections.namedtuple(name, fields)  # validates the names
        size = len(name) + sum(map(len, fields))
        if size <= _NAMEDTUPLE_CACHE_CHARS // 8:  # big shapes are rebuilt each time, never kept
            if len(_NAMEDTUPLES) >= 256 or _cached_chars[0] + size > _NAMEDTUPLE_CACHE_CHARS:
                _NAMEDTUPLES.clear()
                _cached_chars[0] = 0
            _NAMEDTUPLES[key] = cls
            _cached_chars[0] += size
    return cls


def _decode_number(tag: str, v):
    if tag == "Fraction":
        from fractions import Fraction

        if not (len(v) == 2 and all(type(x) is int for x in v)) or v[1] == 0:
            raise ProtocolError("bad Fraction")
        return Fraction(v[0], v[1])
    from decimal import Decimal

    if type(v) is not str or len(v) > 10_000:
        raise ProtocolError("bad Decimal")
    return Decimal(v)


def _collections(name: str):
    import collections

    return getattr(collections, name)


_STDLIB_TAGS = {
    "bytearray": lambda obj, v, depth, refs: bytearray(binascii.a2b_base64(v.encode("ascii"), strict_mode=True)),
    "Counter": lambda obj, v, depth, refs: _collections("Counter")(dict(_decode_items(v, depth, refs))),
    "OrderedDict": lambda obj, v, depth, refs: _collections("OrderedDict")(_decode_items(v, depth, refs)),
    "defaultdict": lambda obj, v, depth, refs: _collections("defaultdict")(None, _decode_items(v, depth, refs)),
    "Fraction": lambda obj, v, depth, refs: _decode_number("Fraction", v),
    "Decimal": lambda obj, v, depth, refs: _decode_number("Decimal", v),
    "namedtuple": _decode_namedtuple,
}


def dumps(message) -> bytes:
    data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass")
    return HEADER.pack(len(data)) + data


def loads(data: bytes):
    try:
        return json.loads(data.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"bad frame: {exc}") from None


def write_frame(fd: int, message) -> None:
    data = memoryview(dumps(message))
    while data:
        n = os.write(fd, data)
        data = data[n:]


def read_exact(fd: int, n: int) -> bytes:
    """Exactly n bytes from fd; raises EOFError when the peer closed first."""
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("peer closed the channel")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int):
    (size,) = HEADER.unpack(read_exact(fd, HEADER.size))
    if size > MAX_FRAME:
        raise ProtocolError(f"frame of {size} bytes exceeds {MAX_FRAME}")
    return loads(read_exact(fd, size))


class FrameReader:
    """Incremental frame parser for non-blocking event loops."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list:
        self._buf += data
        out = []
        while len(self._buf) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buf)
            if size > MAX_FRAME:
                raise ProtocolError(f"frame of {size} bytes exceeds {MAX_FRAME}")
            if len(self._buf) < HEADER.size + size:
                break
            out.append(loads(bytes(self._buf[HEADER.size : HEADER.size + size])))
            del self._buf[: HEADER.size + size]
        return out
