"""Math answer checking (math-verify) that never hangs and never kills the trainer.

math-verify guards itself with `signal.alarm`, which only works in the main
thread, and some answers a model can write (`9^{9^{9^9}}`, `100000!`) make
sympy run, or allocate, past any alarm. So the checking happens in warm worker
processes that the caller kills when a pair runs past a hard wall-clock limit:

    from grpokit.sandbox.mathcheck import check_many, stats
    check_many([("\\frac{1}{2}", "The answer is $\\boxed{0.5}$")])  # [True]

Each pair gives True (equivalent), False (not), or None (could not be decided:
the gold answer does not parse, the check timed out, the input was screened out
as pathological, or a worker died). Before a pair reaches a worker it goes
through a fast path (identical answers, plain numbers) and a cheap screen for
inputs known to hang sympy; screened pairs fall back to a string comparison
(True when the answers are identical, else None).

The workers are plain `python` subprocesses talking JSON lines over pipes: no
fork of the (possibly multi-threaded, CUDA-holding) trainer, no re-import of the
user's `__main__`, no signals in the caller, so it works from any thread. This
file is also the worker's program (run by path, so it imports nothing of
grpokit in the worker).
"""
from __future__ import annotations

import json
import math
import os
import re
import select
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from decimal import Decimal
from typing import Iterable, Sequence

DEFAULT_TIMEOUT = 3.0
# A worker still importing sympy after this long is broken (or the machine is
# badly overloaded); its pairs are answered None rather than waited on forever.
STARTUP_TIMEOUT = 60.0
# After repeated start-up failures, how long to answer None before trying again.
BROKEN_RETRY = 60.0
# The interpreter that runs the workers. sys.executable unless set: embedded
# Pythons (uWSGI, some notebooks) report a host binary there.
PYTHON: str | None = None
# Answers live at the end of a completion; math-verify scans what it is given
# with regexes, so a 1 MB completion is cut to its tail before it is sent.
MAX_PRED_CHARS = 20_000
# Of an unboxed completion math-verify reads this tail (measured: 2,000 characters of
# "1 1 1 ..." cost it 0.05 s, 4,000 already 0.2 s).
MAX_SENT_CHARS = 2_000
MAX_GOLD_CHARS = 5_000  # a worked gold solution keeps its tail, where the box is


# ----------------------------------------------------------------- screening

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_LONG_DIGITS = re.compile(r"\d{400,}")
_MAX_ANSWER_CHARS = 1_000
_TAIL_CHARS = 800


def _last_box(text: str) -> tuple[str, bool] | None:
    """The last `\\boxed{}`'s content and whether it closes (an open one: its first 1,001 characters)."""
    window = text[-MAX_PRED_CHARS:]
    for match in reversed(list(_BOXED.finditer(window))):
        tail = window[match.end() :]
        depth = 1
        for i, ch in enumerate(tail):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return tail[:i], True
        return tail[:_MAX_ANSWER_CHARS + 1], False
    return None


def answer_region(text: str) -> str:
    """The part of a completion math-verify will look at first: the last `\\boxed{}`, else the tail."""
    box = _last_box(text)
    # No box: math-verify takes the last expression; the tail holds it.
    return box[0] if box is not None else text[-_TAIL_CHARS:]


def sent_text(text: str) -> str:
    """What of a completion goes to math-verify. Its readers are super-linear on some text
    (20,000 characters of "1 1 1 ..." take seconds), so it gets the part it would read
    anyway: the last closed box alone, else the last MAX_SENT_CHARS characters."""
    box = _last_box(text)
    if box is not None and box[1]:
        return f"$\\boxed{{{box[0]}}}$"
    return text[-MAX_SENT_CHARS:]


def pathological(answer: str) -> str | None:
    """Why `answer` would likely hang sympy (a short reason), or None when it looks safe.

    Cheap and deliberately conservative: walls of text, giant literals, and any
    expression whose value would be enormous, however it is spelled (towers,
    factorials, Gamma, binomials in any brackets: grpokit.sandbox.magnitude bounds
    the size of every sub-expression from the syntax, without computing it).
    """
    if len(answer) > _MAX_ANSWER_CHARS:
        return "answer too long"
    if _LONG_DIGITS.search(answer):
        return "giant number literal"
    from grpokit.sandbox.magnitude import too_big  # here, not at the top: the worker runs this file alone

    return too_big(answer)


def _screened(sent: str, answer: str) -> str | None:
    """`pathological` for one reading of a completion. Without a box math-verify takes the last
    expression it finds, which may lie before the tail `answer_region` returns, so all of what
    it is sent is sized too."""
    from grpokit.sandbox.magnitude import too_big

    why = pathological(answer)
    if why is None and not sent.startswith("$\\boxed{"):
        why = too_big(sent)
    return why


# ------------------------------------------------------------------ fast path

_STRIP = re.compile(r"\\left|\\right|\\!|\\,|\\;|\\:|\{,\}|\s+|\\?\$|\\displaystyle")
_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)")


def _normal(answer: str) -> str:
    answer = _STRIP.sub("", answer).rstrip(".")
    if answer.startswith("\\text{") and answer.endswith("}"):
        answer = answer[6:-1]
    return answer


def fast_verdict(gold: str, pred_answer: str) -> bool | None:
    """A verdict without sympy when one is certain (identical, or plain numbers); else None."""
    g, p = _normal(gold), _normal(pred_answer)
    if not g or not p:
        return None
    if g == p:
        return True
    if _PLAIN_NUMBER.fullmatch(g) and _PLAIN_NUMBER.fullmatch(p):
        gv, pv = g.replace(",", ""), p.replace(",", "")
        # Decimal, not float: two different 400-digit integers are both inf as floats.
        if Decimal(gv) == Decimal(pv):
            return True
        # Two different integers are different; decimals go to math-verify,
        # which rounds (0.333333 vs 1/3-style cases).
        if "." not in gv and "." not in pv:
            return False
    return None


def gold_text(gold: str) -> str:
    """A gold answer as math-verify should see it: GSM8K `#### N` unwrapped, bare LaTeX put in `$...$`.

    A gold that reads as prose ("18 dollars", "Answer is forty two.") stays
    plain text: math-verify's text reader finds the number in it, or finds
    nothing, and the row is then unscored; wrapped in `$...$` its words would
    become a product of letters that no answer can equal.
    """
    gold = str(gold).strip()
    if "####" in gold:
        gold = gold.rsplit("####", 1)[1].strip()
    if delimited(gold) or reads_as_prose(gold):
        return gold
    return f"${gold}$"


def delimited(text: str) -> bool:
    """Does the text mark its own math (an unescaped `$`, `\\[`, `\\(`, or a box)?"""
    return re.search(r"(?<!\\)\$|\\\[|\\\(|\\boxed|\\fbox", text) is not None


# Letter runs that are mathematics, not prose, in a bare answer.
_MATH_WORDS = {"sqrt", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "pi", "inf", "oo",
               "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "mod", "gcd", "lcm", "max", "min"}
_UNITS = {"cm", "mm", "km", "kg", "mg", "ml", "ft", "yd", "mi", "hr", "lb", "oz"}
_LETTER_RUN = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")


def reads_as_prose(text: str) -> bool:
    """True when bare text holds words or units, not only math (`x^2+1`, `\\frac{1}{2}`, `(0, 1]`)."""
    words = {w.lower() for w in _LETTER_RUN.findall(text)}
    return any((len(w) >= 3 and w not in _MATH_WORDS) or w in _UNITS for w in words)


def _gold_answer(gold: str) -> str:
    # The answer inside the gold text, for the fast path and the screen.
    if "\\boxed" in gold or "\\fbox" in gold:
        return answer_region(gold)
    return gold.strip().strip("$")


# --------------------------------------------------------------- worker side

def _worker_main() -> None:  # pragma: no cover - runs in the subprocess
    import logging
    import resource

    # A worker that runs away on its own (its parent died mid-hang, so nobody
    # kills it) is stopped by the kernel: each pair gets a CPU-time budget.
    limit_mb = int(os.environ.get("GRPOKIT_MATHCHECK_MEMORY_MB", "4096"))
    if limit_mb > 0:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))
        except (ValueError, OSError):
            pass
    cpu_budget = int(float(os.environ.get("GRPOKIT_MATHCHECK_CPU_BUDGET", "30")))
    logging.disable(logging.WARNING)  # math-verify warns on every disabled timeout/failed parse
    from math_verify import parse, verify

    out = sys.stdout.buffer
    gold_cache: dict[str, list] = {}

    def send(obj) -> None:
        out.write(json.dumps(obj).encode() + b"\n")
        out.flush()

    # sympy imports and builds caches lazily on first use; pay that before
    # "ready" so the first real pair is not charged for it against its limit.
    try:
        verify(parse("$x^2+2x+1$", parsing_timeout=None), parse("$\\boxed{(x+1)^2}$", parsing_timeout=None),
               timeout_seconds=None)
        verify(parse("$\\{1,2\\}$", parsing_timeout=None), parse("$(0, \\frac{1}{2}]$", parsing_timeout=None),
               timeout_seconds=None)
    except Exception:  # noqa: BLE001 - warm-up only
        pass
    send({"ready": os.getpid()})
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
            used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
            soft = int(used) + cpu_budget
            try:
                resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
            except (ValueError, OSError):
                pass
            gold = msg["g"]
            parsed_gold = gold_cache.get(gold)
            if parsed_gold is None:
                # Our own hard limit replaces math-verify's signal-based one.
                parsed_gold = parse(gold, parsing_timeout=None)
                if len(gold_cache) > 512:
                    gold_cache.clear()
                gold_cache[gold] = parsed_gold
            if not parsed_gold:
                send({"r": None, "why": "gold"})
                continue
            # Several readings of one answer may come (e.g. "$18 dollars$" and
            # "18 dollars"): equivalent if any reading is.
            preds = msg["p"] if isinstance(msg["p"], list) else [msg["p"]]
            send({"r": any(bool(verify(parsed_gold, parse(p, parsing_timeout=None), timeout_seconds=None))
                           for p in preds)})
        except MemoryError:
            send({"r": None, "why": "memory"})
        except Exception as exc:  # noqa: BLE001 - a failed check is a None, never a dead worker
            send({"r": None, "why": type(exc).__name__})


# --------------------------------------------------------------- parent side

class _Worker:
    """One warm worker process and its read buffer."""

    def __init__(self, memory_mb: int, cpu_budget: float, program: str = __file__,
                 run_name: str = "__grpokit_mathcheck_worker__", env: dict | None = None, quiet: bool = True):
        # `program`, `run_name`, `env` and `quiet` let another worker program share this
        # machinery (grpokit.sandbox.callworker runs reward calls in such a process).
        full_env = dict(os.environ)
        full_env["GRPOKIT_MATHCHECK_MEMORY_MB"] = str(memory_mb)
        full_env["GRPOKIT_MATHCHECK_CPU_BUDGET"] = str(max(5, int(cpu_budget)))
        full_env.update(env or {})
        # Run the program file by path: nothing of grpokit (or the user's
        # __main__) is imported in the worker unless it asks, and its folder is
        # not put on sys.path where it could shadow a standard module.
        bootstrap = "import runpy, sys; runpy.run_path(sys.argv[1], run_name=sys.argv[2])"
        self.proc = subprocess.Popen(
            [PYTHON or sys.executable, "-c", bootstrap, os.path.abspath(program), run_name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if quiet else None,
            env=full_env,
            close_fds=True,
            start_new_session=True,  # Ctrl-C in the trainer's terminal is the trainer's business
        )
        self.fd = self.proc.stdout.fileno()
        self.owner = os.getpid()
        self.buffer = b""
        self.ready = False
        self.started = time.monotonic()
        self.task: int | None = None
        self.deadline = math.inf

    def send(self, gold: str, pred: str | list[str]) -> bool:
        return self.send_message({"g": gold, "p": pred})

    def send_message(self, message: dict) -> bool:
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def read_messages(self) -> list[dict] | None:
        """Complete messages now readable; None when the worker has exited."""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            return None
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        messages = []
        for line in lines:
            try:
                messages.append(json.loads(line))
            except ValueError:
                continue
        return messages

    def kill(self) -> None:
        if os.getpid() != self.owner:
            return  # a forked child's inherited copy: the worker belongs to the parent
        try:
            self.proc.kill()
        except OSError:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


_COUNTERS = (
    "pairs", "fast_path", "screened", "checked", "timeouts", "crashes",
    "gold_unparseable", "errors", "workers_started", "start_failures",
)


class MathChecker:
    """A pool of warm math-verify workers with a hard per-pair wall-clock limit.

    `timeout` (seconds) bounds each pair's time inside a worker; a pair past it
    gets None and its worker is killed and replaced. `workers` is the number
    of processes checking pairs in parallel; `memory_mb` caps each one's
    address space. `fast_path=False` sends every pair to a worker (for
    measuring). Thread-safe: concurrent callers take turns on the pool.
    """

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT, memory_mb: int = 4096,
                 fast_path: bool = True):
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.size = max(1, workers if workers is not None else min(4, os.cpu_count() or 1))
        self.timeout = float(timeout)
        self.memory_mb = memory_mb
        self.fast_path = fast_path  # off only to measure the workers alone
        self._workers: list[_Worker] = []  # mutated in place: the finalizer holds this list
        self._pid = os.getpid()
        # Workers go when the checker is collected or the interpreter exits.
        weakref.finalize(self, _kill_all, self._workers)
        self._lock = threading.Lock()
        self._stats = dict.fromkeys(_COUNTERS, 0)
        self._start_failures = 0  # in a row, reset by any worker becoming ready
        self._broken_until = 0.0

    # -- public
    def warm(self, wait: bool = False) -> bool:
        """Start the workers now (they import sympy in the background).

        With `wait`, block until every worker is ready (or STARTUP_TIMEOUT
        passes); returns whether all are ready.
        """
        with self._lock:
            self._fill(self.size)
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while wait and self._workers and not all(w.ready for w in self._workers):
                if time.monotonic() >= deadline:
                    break
                starting = {w.fd: w for w in self._workers if not w.ready}
                for fd in _poll(starting, deadline - time.monotonic()):
                    worker = starting[fd]
                    if worker not in self._workers:
                        continue  # already replaced while handling another fd
                    messages = worker.read_messages()
                    if messages is None:
                        self._start_failed(worker)
                    elif any("ready" in m for m in messages):
                        self._mark_ready(worker)
            return bool(self._workers) and all(w.ready for w in self._workers)

    def stats(self) -> dict:
        """Counters since start: pairs, fast_path, screened, checked, timeouts, crashes, ..."""
        with self._lock:
            return dict(self._stats, workers=len(self._workers))

    def close(self) -> None:
        with self._lock:
            _kill_all(self._workers)

    def check(self, gold: str, pred: str, timeout: float | None = None) -> bool | None:
        return self.check_many([(gold, pred)], timeout=timeout)[0]

    def check_many(self, pairs: Iterable[tuple[str, str | Sequence[str]]], timeout: float | None = None
                   ) -> list[bool | None]:
        """Verdicts for (gold, prediction) pairs, checked in parallel: True, False or None.

        A prediction may be a list of readings of one answer (at most 4): the
        pair is equivalent when any reading is.
        """
        pairs = [(str(g), [str(p)] if isinstance(p, str) else [str(x) for x in p]) for g, p in pairs]
        limit = self.timeout if timeout is None else float(timeout)
        results: list[bool | None] = [None] * len(pairs)
        jobs: deque[tuple[int, str, str]] = deque()
        local = dict.fromkeys(_COUNTERS, 0)
        local["pairs"] = len(pairs)
        for i, (gold, pred) in enumerate(pairs):
            gold = gold_text(gold[-MAX_GOLD_CHARS:])
            readings = [sent_text(p[-MAX_PRED_CHARS:]) for p in pred[:4]]
            if not readings:
                continue  # nothing to check: None
            gold_answer, pred_answers = _gold_answer(gold), [answer_region(p) for p in readings]
            pred_answer = pred_answers[0]
            boxed = "\\boxed" in readings[0] or "\\fbox" in readings[0]
            verdict = fast_verdict(gold_answer, pred_answer) if self.fast_path and boxed else None
            if verdict is not None:
                results[i] = verdict
                local["fast_path"] += 1
            elif pathological(gold_answer) or any(_screened(r, a) for r, a in zip(readings, pred_answers)):
                results[i] = True if _normal(gold_answer) and _normal(gold_answer) == _normal(pred_answer) else None
                local["screened"] += 1
            else:
                jobs.append((i, gold, readings if len(readings) > 1 else readings[0]))
        with self._lock:
            if jobs:
                self._run(jobs, results, limit, local)
            for key, value in local.items():
                self._stats[key] += value
        return results

    # -- internals
    def _fill(self, wanted: int) -> None:
        if os.getpid() != self._pid:
            # A forked child (e.g. a DataLoader worker) inherited the parent's
            # pipes: those workers are the parent's, so forget them, never kill them.
            self._workers.clear()
            self._pid = os.getpid()
        for worker in [w for w in self._workers if w.proc.poll() is not None]:
            # Died unnoticed between calls; one that never got ready counts as a failed start.
            worker.kill()
            self._workers.remove(worker)
            if not worker.ready:
                self._count_start_failure()
        if time.monotonic() < self._broken_until:
            return  # workers cannot start here right now; do not spin spawning them
        while len(self._workers) < wanted:
            self._workers.append(_Worker(self.memory_mb, cpu_budget=max(30.0, 4 * self.timeout)))
            self._stats["workers_started"] += 1

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        self._workers[:] = [w for w in self._workers if w is not worker]
        self._fill(self.size)

    def _mark_ready(self, worker: _Worker) -> None:
        worker.ready = True
        self._start_failures = 0

    def _start_failed(self, worker: _Worker) -> None:
        self._count_start_failure()
        self._replace(worker)

    def _count_start_failure(self) -> None:
        # A worker that dies or hangs before "ready" (math-verify missing, no
        # memory, a broken interpreter): after 2 x pool size failures in a row
        # stop spawning for BROKEN_RETRY seconds; its pairs get None meanwhile.
        self._stats["start_failures"] += 1
        self._start_failures += 1
        if self._start_failures >= 2 * self.size:
            self._broken_until = time.monotonic() + BROKEN_RETRY
            self._start_failures = 0

    def _run(self, jobs: deque, results: list, limit: float, local: dict) -> None:
        self._fill(self.size)
        retried: set[int] = set()
        owner: dict[int, tuple] = {}  # id(worker) -> the job it is on
        while jobs or owner:
            if jobs and not self._workers:
                # No worker can run (start-up keeps failing): answer None, do not wait.
                local["errors"] += len(jobs)
                jobs.clear()
                if not owner:
                    break
            for worker in list(self._workers):
                if worker.ready and worker.task is None and jobs:
                    job = jobs.popleft()
                    if worker.send(job[1], job[2]):
                        worker.task, worker.deadline = job[0], time.monotonic() + limit
                        owner[id(worker)] = job
                    else:
                        self._lost(worker, job, jobs, retried, results, local, owner)
            if not owner and not jobs:
                break
            waits = [w.deadline for w in self._workers if w.task is not None]
            waits += [w.started + STARTUP_TIMEOUT for w in self._workers if not w.ready]
            fds = {w.fd: w for w in self._workers}
            for fd in _poll(fds, min(waits, default=time.monotonic() + 1.0) - time.monotonic()):
                worker = fds[fd]
                if worker not in self._workers:
                    continue  # already replaced while handling another fd
                messages = worker.read_messages()
                if messages is None:
                    if not worker.ready:
                        self._start_failed(worker)
                        continue
                    job = owner.pop(id(worker), None)
                    local["crashes"] += 1
                    self._replace(worker)
                    if job is not None:
                        self._lost(None, job, jobs, retried, results, local, owner)
                    continue
                for msg in messages:
                    if "ready" in msg:
                        self._mark_ready(worker)
                    elif worker.task is not None:
                        job = owner.pop(id(worker))
                        results[job[0]] = msg.get("r")
                        why = msg.get("why")
                        if why == "gold":
                            local["gold_unparseable"] += 1
                        elif why:
                            local["errors"] += 1
                        else:
                            local["checked"] += 1
                        worker.task, worker.deadline = None, math.inf
            now = time.monotonic()
            for worker in list(self._workers):
                if worker.task is not None and now > worker.deadline:
                    # The hard limit: the pair gets None, the worker is killed
                    # mid-computation and replaced by a fresh one.
                    owner.pop(id(worker), None)
                    results[worker.task] = None
                    local["timeouts"] += 1
                    self._replace(worker)
                elif not worker.ready and now > worker.started + STARTUP_TIMEOUT:
                    self._start_failed(worker)

    def _lost(self, worker, job, jobs, retried, results, local, owner) -> None:
        # A worker died under a pair (or before taking it): retry the pair once
        # on a fresh worker; a pair that kills two workers is answered None.
        if worker is not None:
            local["crashes"] += 1
            owner.pop(id(worker), None)
            self._replace(worker)
        if job[0] in retried:
            results[job[0]] = None
        else:
            retried.add(job[0])
            jobs.appendleft(job)


def _poll(workers_by_fd: dict, timeout: float) -> list[int]:
    """The fds with something to read (or a hang-up) within `timeout` seconds."""
    # poll, not select: a trainer with many open files hands out fds above 1024.
    poller = select.poll()
    for fd in workers_by_fd:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    try:
        return [fd for fd, _ in poller.poll(max(0.0, timeout) * 1000)]
    except (OSError, ValueError):
        return []


def _kill_all(workers: list) -> None:
    for worker in workers:
        worker.kill()
    workers.clear()


# ----------------------------------------------------------- module helpers

_default: MathChecker | None = None
_default_lock = threading.Lock()


def default_checker() -> MathChecker:
    """The process-wide checker every reward shares (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MathChecker()
        return _default


def check(gold: str, pred: str, timeout: float | None = None) -> bool | None:
    """Is `pred` (a completion or an answer) equivalent to `gold`? True, False or None."""
    return default_checker().check(gold, pred, timeout=timeout)


def check_many(pairs: Sequence[tuple[str, str]], timeout: float | None = None) -> list[bool | None]:
    """Verdicts for many (gold, prediction) pairs in parallel, each within the hard limit."""
    return default_checker().check_many(pairs, timeout=timeout)


def stats() -> dict:
    """Counters of the shared checker (pairs, fast_path, screened, checked, timeouts, ...)."""
    return default_checker().stats()


if __name__ == "__grpokit_mathcheck_worker__":
    _worker_main()
