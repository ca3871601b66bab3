"""The `python` tool: the model's code runs in grpokit.sandbox, with state kept for one episode.

Each call is a fresh sandboxed process (same isolation and limits as the
code_execution reward). State across the calls of one episode comes from replay:
the cells that ran cleanly earlier in the episode run again, silently, before the
new one, so variables and functions defined earlier exist. Replay means
randomness and side effects repeat; cells that failed are not replayed. A new
episode (reset) starts with no cells, so nothing is shared between episodes.
Like a notebook, a final bare expression is printed.
"""
from __future__ import annotations

from grpokit.sandbox.supervisor import _TAIL as SANDBOX_KEPT_BYTES
from grpokit.tools.registry import ToolError, register_tool

# Runs inside the sandbox. The model's cells are Python literals spliced in with repr(),
# executed in a namespace of their own, so they never run in the harness's globals.
_HARNESS = '''
import ast as _ast, contextlib as _cl, io as _io, linecache as _lc, sys as _sys, traceback as _tb
_CELLS = {cells!r}
_NEW = {new!r}
_ns = {{"__name__": "__main__"}}

def _run(source, name, show_last):
    _lc.cache[name] = (len(source), None, source.splitlines(True), name)
    tree = _ast.parse(source, name, "exec")
    last = None
    if show_last and tree.body and isinstance(tree.body[-1], _ast.Expr):
        last = _ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), _ns)
    if last is not None:
        value = eval(compile(last, name, "eval"), _ns)
        if value is not None:
            print(repr(value))

for _i, _cell in enumerate(_CELLS):
    try:
        with _cl.redirect_stdout(_io.StringIO()), _cl.redirect_stderr(_io.StringIO()):
            _run(_cell, "<cell %d>" % (_i + 1), False)
    except BaseException as _exc:
        print("(note: cell %d failed when replayed: %s)" % (_i + 1, type(_exc).__name__), file=_sys.stderr)
try:
    _run(_NEW, "<cell %d>" % (len(_CELLS) + 1), True)
except SystemExit:
    raise
except BaseException as _exc:
    _frames = [f for f in _tb.extract_tb(_exc.__traceback__) if f.filename.startswith("<cell")]
    _sys.stdout.flush()
    print("Traceback (most recent call last):", file=_sys.stderr)
    print("".join(_tb.format_list(_frames) + _tb.format_exception_only(type(_exc), _exc)).rstrip(), file=_sys.stderr)
    _sys.exit(1)
'''


def harness(cells: list[str], new: str) -> str:
    """The program the sandbox runs for one call: earlier cells replayed quietly, then the new one."""
    return _HARNESS.format(cells=list(cells), new=new)


@register_tool("python")
class PythonTool:
    """One episode's Python session; `python(code)` is the tool."""

    def __init__(self, timeout: float = 5.0, memory_mb: int = 1024, workers: int | None = None):
        from grpokit.sandbox import Limits

        try:
            self.limits = Limits(wall_s=float(timeout), memory_mb=int(memory_mb))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{exc}; e.g. timeout: 5.0, memory_mb: 1024") from None
        if workers is not None and not (isinstance(workers, int) and 1 <= workers <= 64):
            raise ValueError("workers must be an integer from 1 to 64 (a pool of its own), or left out "
                             "to share the process-wide sandbox pool")
        self.workers = workers
        self.cells: list[str] = []

    def reset(self, **row) -> None:
        self.cells = []

    def python(self, code: str) -> str:
        """Run Python code and return what it prints (a final bare expression is printed too).

        Variables and functions from earlier calls in this conversation are kept.

        Args:
            code: The Python code to run.
        """
        if not isinstance(code, str) or not code.strip():
            raise ToolError("give the Python code to run in the `code` argument")
        result = self._run(harness(self.cells, code))
        output = (_with_cut_note(result.stdout) + _with_cut_note(result.stderr)).strip()
        if result.status in ("cancelled", "sandbox_error"):
            raise ToolError(f"the sandbox could not run the code ({result.error}); try again")
        if result.status == "timeout" or str(result.error or "").startswith("timeout"):
            raise ToolError(f"{output}\nTimeoutError: the code ran longer than {self.limits.wall_s:g} s".strip())
        if result.error not in (None, "wrong output"):
            # A traceback from the harness, or the process was stopped (memory, file size, signal).
            raise ToolError(output or f"the program was stopped: {result.error}")
        self.cells.append(code)
        return output or "(no output)"

    def _run(self, program: str):
        from grpokit.sandbox import Job

        job = Job(program, cases=[{"input": "", "output": ""}], limits=self.limits)
        [result] = _pool(self.workers).run([job], budget_s=self.limits.wall_s * 2 + 10)
        return result


def _with_cut_note(stream: str) -> str:
    # The sandbox keeps only the last bytes of each stream; say so rather than show a silent tail.
    if len(stream.encode("utf-8", "replace")) < SANDBOX_KEPT_BYTES:
        return stream
    return f"[earlier output cut: only the last {SANDBOX_KEPT_BYTES} bytes are kept]\n{stream}"


_OWN_POOLS: dict[int, object] = {}


def _pool(workers: int | None):
    from grpokit.sandbox import SandboxPool, get_pool

    if workers is None:
        return get_pool()
    if workers not in _OWN_POOLS:
        _OWN_POOLS[workers] = SandboxPool(workers=workers)
    return _OWN_POOLS[workers]
