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

MAX_FRAME = 32 * 1024 * 1024  # a frame larger than this is a protocol error
_MAX_DEPTH = 200
_HEADER = struct.Struct("!I")


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
    except ProtocolError:
        raise
    except Exception as exc:  # unhashable keys, wrong shapes, bad base64 ...
        raise ProtocolError(f"bad {tag!r} value: {exc}") from None
    raise ProtocolError(f"unknown tag {tag!r}")


def dumps(message) -> bytes:
    data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass")
    return _HEADER.pack(len(data)) + data


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
    (size,) = _HEADER.unpack(read_exact(fd, _HEADER.size))
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
        while len(self._buf) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._buf)
            if size > MAX_FRAME:
                raise ProtocolError(f"frame of {size} bytes exceeds {MAX_FRAME}")
            if len(self._buf) < _HEADER.size + size:
                break
            out.append(loads(bytes(self._buf[_HEADER.size : _HEADER.size + size])))
            del self._buf[: _HEADER.size + size]
        return out
