"""Grader-side handles on the sandboxed program's objects.

The test code runs in the grader; each name the program defined is either a
plain value (decoded into a fresh builtin object) or a `Remote`: calling it,
reading an attribute or iterating it asks the sandboxed process, and what comes
back is again plain data or another `Remote`. A `Remote` equals only itself, so
an object that claims to equal everything cannot pass an `==` assertion.
"""
from __future__ import annotations

import builtins

from grpokit.sandbox import codec


class Lost(BaseException):
    """The sandboxed process died or broke the protocol (not catchable by `except Exception`)."""


class SandboxedException(Exception):
    """An exception of a type defined by the program, raised by one of its functions."""


# Builtin exceptions a test may expect (`with pytest.raises(ValueError)` style);
# the control-flow ones would change how the grader's own code runs.
_NOT_MAPPED = {"SystemExit", "KeyboardInterrupt", "GeneratorExit", "StopIteration", "StopAsyncIteration"}


def _exception(name: str, message: str) -> BaseException:
    cls = getattr(builtins, name, None) if isinstance(name, str) else None
    if name in _NOT_MAPPED or not (isinstance(cls, type) and issubclass(cls, Exception)):
        return SandboxedException(f"{name}: {message}")
    try:
        return cls(message)
    except Exception:
        return SandboxedException(f"{name}: {message}")


class Conn:
    """The request/response pipe pair to one sandboxed process."""

    def __init__(self, req_fd: int, resp_fd: int) -> None:
        self.req_fd, self.resp_fd = req_fd, resp_fd
        self.lost: str | None = None

    def recv(self):
        if self.lost:
            raise Lost(self.lost)
        try:
            return codec.read_frame(self.resp_fd)
        except (EOFError, OSError, codec.ProtocolError) as exc:
            self.lost = f"sandboxed process stopped answering: {exc}"
            raise Lost(self.lost) from None

    def request(self, message: dict):
        if self.lost:
            raise Lost(self.lost)
        try:
            codec.write_frame(self.req_fd, message)
        except OSError as exc:
            self.lost = f"sandboxed process is gone: {exc}"
            raise Lost(self.lost) from None
        reply = self.recv()
        if not isinstance(reply, dict):
            self.lost = "malformed reply"
            raise Lost(self.lost)
        return reply

    def unwrap(self, reply: dict):
        if "exc" in reply:
            raise _exception(reply.get("exc"), str(reply.get("msg", ""))[:500])
        if reply.get("stop") is True:
            raise StopIteration
        if "ref" in reply:
            ref = reply["ref"]
            if type(ref) is not int:
                self.lost = "malformed reference"
                raise Lost(self.lost)
            return Remote(self, ref, bool(reply.get("callable")))
        if "v" in reply:
            try:
                return codec.decode(reply["v"])
            except codec.ProtocolError as exc:
                self.lost = f"malformed value: {exc}"
                raise Lost(self.lost) from None
        self.lost = "malformed reply"
        raise Lost(self.lost)


def _arg(value):
    # What the grader passes in: plain data, or a handle the program gave us.
    if isinstance(value, Remote):
        return {"~": "ref", "v": value._ref}
    return codec.encode(value)


class Remote:
    __slots__ = ("_conn", "_ref", "_callable")

    def __init__(self, conn: Conn, ref: int, is_callable: bool) -> None:
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_callable", is_callable)

    def _ask(self, op: str, **fields):
        return self._conn.unwrap(self._conn.request({"op": op, "ref": self._ref, **fields}))

    def __call__(self, *args, **kwargs):
        try:
            enc_args = [_arg(a) for a in args]
            enc_kwargs = [[k, _arg(v)] for k, v in kwargs.items()]
        except codec.Unencodable as exc:
            raise TypeError(f"cannot pass this argument into the sandbox: {exc}") from None
        back = [i for i, a in enumerate(args) if type(a) in (list, dict, set)]
        reply = self._conn.request({"op": "call", "ref": self._ref, "args": enc_args, "kwargs": enc_kwargs, "back": back})
        result = self._conn.unwrap(reply)
        for item in reply.get("back", ()):
            _write_back(args, item)
        return result

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._ask("getattr", name=name)

    def __iter__(self):
        return self._ask("iter")

    def __next__(self):
        return self._ask("next")

    def __len__(self):
        return self._ask("len")

    def __getitem__(self, key):
        return self._ask("getitem", key=_arg(key))

    def __contains__(self, item):
        return self._ask("contains", item=_arg(item))

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __hash__(self):
        return id(self)

    def __bool__(self):
        return True

    def __repr__(self):
        return f"<sandboxed {'function' if self._callable else 'object'} #{self._ref}>"


def _write_back(args: tuple, item) -> None:
    # A function that sorts its list argument in place is graded on the list.
    try:
        index, encoded = item
        original = args[index]
        value = codec.decode(encoded)
    except Exception:
        return
    if type(original) is list and type(value) is list:
        original[:] = value
    elif type(original) is dict and type(value) is dict:
        original.clear()
        original.update(value)
    elif type(original) is set and type(value) is set:
        original.clear()
        original.update(value)
