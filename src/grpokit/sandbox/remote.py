"""Grader-side handles on the sandboxed program's objects.

The test code runs in the grader; each name the program defined is either a
plain value (decoded into a fresh builtin object) or a `Remote`: calling it,
reading an attribute or iterating it asks the sandboxed process, and what comes
back is again plain data or another `Remote`. A `Remote` equals only itself, so
an object that claims to equal everything cannot pass an `==` assertion.
"""
from __future__ import annotations

import builtins
import os
import select
import time

from grpokit.sandbox import codec


class Lost(BaseException):
    """The sandboxed process died or broke the protocol (not catchable by `except Exception`)."""


class GraderOutOfMemory(BaseException):
    """The grader itself ran out of memory: our failure, so the sample scores None (not catchable by tests)."""


class SandboxedException(Exception):
    """An exception of a type defined by the program, raised by one of its functions."""


# Builtin exceptions a test may expect (`with pytest.raises(ValueError)` style);
# the control-flow ones would change how the grader's own code runs.
# MemoryError too: in the grader it means *our* process ran out (scored None), which a
# program must not be able to claim by raising its own.
_NOT_MAPPED = {"SystemExit", "KeyboardInterrupt", "GeneratorExit", "StopIteration", "StopAsyncIteration",
               "MemoryError"}


def _exception(name: str, message: str) -> BaseException:
    cls = getattr(builtins, name, None) if isinstance(name, str) else None
    if name in _NOT_MAPPED or not (isinstance(cls, type) and issubclass(cls, Exception)):
        return SandboxedException(f"{name}: {message}")
    try:
        return cls(message)
    except Exception:
        return SandboxedException(f"{name}: {message}")


# Reply shapes the grader accepts, per request: anything else is the program
# breaking the protocol (its failure, scored 0), never a signal to the grader.
_VALUE_KEYS = ({"v"}, {"ref", "callable"}, {"exc", "msg"})
_CALL_KEYS = tuple(keys | {"back"} for keys in _VALUE_KEYS)
_REPLY_KEYS = {"call": (*_VALUE_KEYS, *_CALL_KEYS), "next": (*_VALUE_KEYS, {"stop"})}


class Conn:
    """The request/response pipe pair to one sandboxed process, with the run's deadline.

    Every wait for the program is bounded by `deadline` (time.monotonic()): a
    program that does not answer in time is marked lost (`timed_out`), and the
    test code sees no exception of ours it could swallow; the grader checks
    `lost` after each test.
    """

    def __init__(self, req_fd: int, resp_fd: int, deadline: float | None = None, cpu=None) -> None:
        self.req_fd, self.resp_fd = req_fd, resp_fd
        self.deadline = deadline
        self.cpu = cpu  # a cputime.CpuClock: the run's limit in CPU seconds of its own cgroup
        self.lost: str | None = None
        self.timed_out = False
        self.max_reply = codec.MAX_REPLY
        if deadline is not None:
            os.set_blocking(req_fd, False)
            os.set_blocking(resp_fd, False)

    def _fail(self, why: str, timed_out: bool = False) -> Lost:
        if self.lost is None:
            self.lost, self.timed_out = why, timed_out
        return Lost(self.lost)

    def _wait(self, fd: int, events: int) -> None:
        if self.deadline is None:
            return
        poller = select.poll()
        poller.register(fd, events)
        while True:
            now = time.monotonic()
            left = self.deadline - now
            if left <= 0:
                raise self._fail("wall-clock limit reached while waiting for the program", timed_out=True)
            self.check_cpu(now)
            if self.cpu is not None:
                left = min(left, self.cpu.seconds_to_next_check(now))
            if poller.poll(left * 1000 + 1):
                return

    def check_cpu(self, now: float | None = None) -> None:
        """Lost (timed out) once the run's processes together used their CPU-time limit."""
        if self.cpu is not None and self.cpu.spent(time.monotonic() if now is None else now):
            raise self._fail(f"CPU time limit of {self.cpu.limit:g}s reached (all the run's processes "
                             "together)", timed_out=True)

    def _read_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            try:
                chunk = os.read(self.resp_fd, min(n, 1 << 20))
            except BlockingIOError:
                self._wait(self.resp_fd, select.POLLIN)
                continue
            if not chunk:
                raise EOFError("peer closed the channel")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv(self):
        if self.lost:
            raise Lost(self.lost)
        try:
            (size,) = codec.HEADER.unpack(self._read_exact(codec.HEADER.size))
            if size > self.max_reply:
                raise codec.ProtocolError(f"reply of {size} bytes exceeds the {self.max_reply}-byte cap")
            return codec.loads(self._read_exact(size))
        except MemoryError:
            raise GraderOutOfMemory("the grader ran out of memory reading a reply within the size cap") from None
        except (EOFError, OSError, codec.ProtocolError) as exc:
            raise self._fail(f"sandboxed process stopped answering: {exc}") from None

    def _send(self, message: dict) -> None:
        data = memoryview(codec.dumps(message))
        while data:
            try:
                data = data[os.write(self.req_fd, data):]
            except BlockingIOError:
                self._wait(self.req_fd, select.POLLOUT)

    def request(self, message: dict):
        if self.lost:
            raise Lost(self.lost)
        try:
            self._send(message)
        except OSError as exc:
            raise self._fail(f"sandboxed process is gone: {exc}") from None
        reply = self.recv()
        allowed = _REPLY_KEYS.get(message["op"], _VALUE_KEYS)
        if not isinstance(reply, dict) or set(reply) not in allowed:
            raise self._fail(f"malformed reply to {message['op']!r}")
        return reply

    def unwrap(self, reply: dict):
        if "exc" in reply:
            name, msg = reply["exc"], reply["msg"]
            if not (isinstance(name, str) and isinstance(msg, str)):
                raise self._fail("malformed exception reply")
            raise _exception(name, msg[:500])
        if "stop" in reply:
            if reply["stop"] is not True:
                raise self._fail("malformed stop reply")
            raise StopIteration  # only ever reached from Remote.__next__ (see _REPLY_KEYS)
        if "ref" in reply:
            ref = reply["ref"]
            if type(ref) is not int or type(reply["callable"]) is not bool:
                raise self._fail("malformed reference")
            return Remote(self, ref, reply["callable"])
        try:
            return codec.decode(reply["v"])
        except MemoryError:
            raise GraderOutOfMemory("the grader ran out of memory decoding a value") from None
        except (codec.ProtocolError, RecursionError) as exc:
            raise self._fail(f"malformed value: {exc}") from None


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
        back = reply.get("back", [])
        if type(back) is not list:
            raise self._conn._fail("malformed reply to 'call'")
        for item in back:
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
