"""Code rewards: run the completion's program against the row's tests, in the sandbox.

The program is the last fenced code block of the completion (```python or an
unlabelled fence), or the whole completion when it has none. Execution happens
in `grpokit.sandbox` (isolated, killable, graded out of the program's reach);
nothing here ever execs model output in the trainer's process.
"""
from __future__ import annotations

import ast
import functools
import json
import logging
import math
import warnings

from grpokit.completions import code_blocks, extract_code_block, prompt_text, texts
from grpokit.rewards._bound import BatchReward, Lazy
from grpokit.rewards.registry import RewardConfigError, register

log = logging.getLogger(__name__)

# The longest program a code reward compiles or runs. Compiling costs about a microsecond a
# character (200 kB of `[1, 2, 3] ` took 0.1 s), and a program longer than any generation
# limit a GRPO run sets (16k tokens is about 64 kB) is padding, not a solution: it scores 0,
# the floor, so length can neither stall a step nor earn a None.
MAX_PROGRAM_CHARS = 64_000


def program_of(text: str) -> str:
    """The program a completion carries: its last Python/unlabelled fenced block, else all of it."""
    block = extract_code_block(text, "python")
    return block if block is not None else text


@register("code_execution", aliases=("code_exec", "unit_tests"), family="code")
def code_execution(all_or_nothing: bool = False, timeout: float = 5.0, memory_mb: int = 1024,
                   budget_s: float | None = 120.0, workers: int | None = None):
    """Run the completion's Python program against the row's tests in an isolated sandbox; score the share that pass.

    Reads the `tests` column. Each entry may be:
    - a string of Python test code run after the program (asserts, or HumanEval's
      `def check(candidate)`, which is called on the `entry_point` column's function
      when the code does not call it itself): one test, passes when it runs to the end;
    - a HumanEval-style dict {"test": code, "entry_point": name};
    - a list of assert strings: each one a test, scored as the share that pass;
    - a list of {"input": ..., "output": ...} stdin/stdout cases (or one dict of two
      lists, {"input": [...], "output": [...]} as in code_contests, or APPS's
      {"inputs", "outputs"}): the program runs once per case; a case passes when it
      exits 0 and prints the expected output (trailing whitespace ignored);
    - an APPS call-based dict {"fn_name", "inputs", "outputs"}: each case calls the
      function (a `Solution` method when the program has that class) with its arguments.
    A JSON string holding such a list or dict is accepted too. Helpers the row's prompt
    defines (HumanEval/32's `poly`) are bound for the tests from the prompt (TRL passes
    it as `prompts`), never from the completion, so redefining one cannot forge a pass. Rows without tests score None,
    and so do rows whose test code does not compile (with a warning naming the row); a
    column of the wrong length raises.

    The program is the last ```python (or unlabelled) fenced block, else the whole
    completion; a program longer than 64,000 characters scores 0 without being run.
    Assertions run in the grader's process against values the program's
    functions return, so exiting early, always-equal objects, printing "passed" or
    patching the test harness score 0. Test code sees its own builtins and only the
    program names it mentions (plus standard-library modules the program imported),
    so a program's own `abs` or class `math` cannot change what the tests call. A
    program past its time limit scores 0. Status "cancelled" (step budget) or a broken
    sandbox give None, never a silent 0.

    Parameters: all_or_nothing (1.0 only when every test passes; default False),
    timeout (seconds per run, default 5: CPU seconds of all the program's processes together,
    which concurrent programs cannot use up, with twice that of wall-clock for a program that
    waits; wall-clock where the machine has no per-run CPU cgroup), memory_mb (address-space
    cap per process, default 1024), budget_s (seconds for a whole batch; unfinished
    programs score None; None = no budget), workers (parallel runs; default: CPU count).
    """
    from grpokit.sandbox import Limits, SandboxPool, get_pool

    if not isinstance(all_or_nothing, bool):
        raise RewardConfigError("code_execution: all_or_nothing must be true or false")
    try:
        limits = Limits(wall_s=float(timeout), memory_mb=int(memory_mb))
    except (TypeError, ValueError) as exc:
        raise RewardConfigError(f"code_execution: {exc}; e.g. timeout=5.0, memory_mb=1024") from None
    if budget_s is not None and not (isinstance(budget_s, (int, float)) and budget_s > 0):
        raise RewardConfigError("code_execution: budget_s must be a positive number of seconds, or None")
    if workers is not None and not (isinstance(workers, int) and 1 <= workers <= 64):
        raise RewardConfigError("code_execution: workers must be an integer from 1 to 64")
    # The pool's processes stay in this process; a pickled copy of the reward
    # starts (or shares) its own where it lands.
    pool = Lazy(get_pool) if workers is None else Lazy(SandboxPool, workers=workers)
    return BatchReward("code_execution", _run_tests, all_or_nothing=all_or_nothing, limits=limits,
                       budget_s=budget_s, pool=pool)


def _run_tests(completions, kwargs: dict, all_or_nothing: bool, limits, budget_s: float | None,
               pool: Lazy) -> list[float | None]:
    programs = texts(completions)
    n = len(programs)
    rows = _column(kwargs.get("tests"), n)
    entry_points = _column(kwargs.get("entry_point"), n, "entry_point")
    prompts = _column(kwargs.get("prompts"), n, "prompts")
    scores: list[float | None] = [None] * n
    jobs, where, broken = [], [], []
    for i, (text, row, ep, prompt) in enumerate(zip(programs, rows, entry_points, prompts)):
        program = program_of(text)
        try:
            job = build_job(program, row, ep, limits, row_index=i, prompt=prompt)
        except BrokenTestCode as exc:
            broken.append(str(exc))  # the row cannot be judged: None, and said loudly below
            continue
        if job is None:
            continue
        if len(program) > MAX_PROGRAM_CHARS:
            scores[i] = 0.0
        else:
            jobs.append(job)
            where.append(i)
    if broken:
        warnings.warn(f"{len(broken)} rows score None: {broken[0]}", RuntimeWarning, stacklevel=2)
    if not jobs:
        return scores
    try:
        results = pool.get().run(jobs, budget_s=budget_s)
    except Exception as exc:  # the pool never should; a reward never may
        log.exception("code_execution: sandbox failed")
        warnings.warn(f"code_execution: sandbox failed ({exc}); batch scored None", RuntimeWarning, stacklevel=2)
        return scores
    skipped = 0
    for i, result in zip(where, results):
        score = result.score
        if score is None:
            skipped += 1
        elif all_or_nothing:
            score = 1.0 if result.total and result.passed == result.total else 0.0
        scores[i] = score if score is None or math.isfinite(score) else 0.0
    if skipped:
        warnings.warn(f"code_execution: {skipped} of {len(jobs)} programs could not be judged "
                      f"(step budget or sandbox failure); they score None", RuntimeWarning, stacklevel=2)
    return scores


def _column(values, n: int, name: str = "tests") -> list:
    if values is None or isinstance(values, (str, dict)):
        return [values] * n
    if name == "prompts" and isinstance(values, (list, tuple)) and values and isinstance(values[0], dict):
        return [values] * n  # one chat prompt (a list of turns) for every completion
    try:
        values = list(values)
    except TypeError:
        raise ValueError(f"code_execution: the `{name}` column must hold one entry per completion, "
                         f"not a single {type(values).__name__}") from None
    if len(values) != n:
        raise ValueError(f"code_execution: the `{name}` column has {len(values)} entries for {n} completions; "
                         "pass one entry per completion (TRL repeats each row's columns per generation)")
    return values


def build_job(program: str, tests, entry_point, limits, row_index: int = 0, prompt=None):
    """The sandbox Job for one row, or None when the row has no tests.

    prompt: the row's prompt (text or chat turns); helpers it defines for the tests are
    bound from it, never from the program (prompt_helpers).

    Raises ValueError naming the row when the tests entry has a shape we cannot grade
    (that is a data-set problem, not something a model wrote).
    """
    from grpokit.sandbox import Job

    if isinstance(tests, str) and tests.strip()[:1] in ("[", "{"):
        try:
            tests = json.loads(tests)
        except ValueError:
            pass  # Python code that starts with a bracket
    if tests is None or (isinstance(tests, (list, tuple)) and not tests):
        return None
    if isinstance(tests, dict):
        ins = tests.get("input", tests.get("inputs"))
        outs = tests.get("output", tests.get("outputs"))
        if "test" in tests:
            entry_point = tests.get("entry_point") or entry_point
            tests = tests["test"]
        elif tests.get("fn_name") and isinstance(ins, (list, tuple)) and isinstance(outs, (list, tuple)):
            # APPS call-based rows: each case calls fn_name (a Solution method when there is one).
            entry_point = _entry_name(tests["fn_name"], row_index)
            tests = call_tests(entry_point, ins, outs, "class Solution" in program, row_index)
            if not tests:
                return None
            return Job(program, tests=_checked(tests, row_index), limits=limits)
        elif isinstance(ins, (list, tuple)) and isinstance(outs, (list, tuple)) and len(ins) == len(outs):
            # Columnar cases: code_contests {"input": [...], "output": [...]}, APPS {"inputs", "outputs"}.
            if not ins:
                return None
            tests = [{"input": i, "output": o} for i, o in zip(ins, outs)]
        elif "input" in tests or "output" in tests:
            tests = [tests]
    if isinstance(tests, str):
        if entry_point:
            entry_point = _entry_name(entry_point, row_index)
        code = _with_check_call(tests, entry_point)
        return Job(program, tests=_checked([code], row_index), limits=limits, entry_point=entry_point or None,
                   helpers=prompt_helpers(prompt, entry_point))
    if isinstance(tests, (list, tuple)):
        if all(isinstance(t, str) for t in tests):
            return Job(program, tests=_checked(list(tests), row_index), limits=limits,
                       helpers=prompt_helpers(prompt, entry_point))
        if all(isinstance(t, dict) and ("input" in t or "output" in t) for t in tests):
            return Job(program, cases=[{"input": t.get("input", ""), "output": t.get("output", "")} for t in tests],
                       limits=limits)
    raise ValueError(
        f"code_execution: row {row_index}: the `tests` entry is a {type(tests).__name__} we cannot grade; "
        "use test code (str), a list of assert strings, a list of {'input', 'output'} dicts, "
        "a HumanEval dict {'test', 'entry_point'} or an APPS dict {'fn_name', 'inputs', 'outputs'}"
    )


def _entry_name(name, row_index: int) -> str:
    if not (isinstance(name, str) and name.isidentifier()):
        raise ValueError(f"code_execution: row {row_index}: entry_point {name!r} is not a Python name")
    return name


def call_tests(fn_name: str, inputs, outputs, solution_class: bool, row_index: int) -> list[str]:
    """One test per APPS call-based case: call the function with the case's arguments.

    As APPS's own judge does: a tuple result compares as a list, and an expected
    value wrapped in a one-element list also matches the bare value.
    """
    if len(inputs) != len(outputs):
        raise ValueError(f"code_execution: row {row_index}: APPS row has {len(inputs)} inputs "
                         f"but {len(outputs)} outputs")
    target = f"Solution().{fn_name}" if solution_class else fn_name
    tests = []
    for args, want in zip(inputs, outputs):
        try:
            args_json, want_json = json.dumps(args if isinstance(args, list) else [args]), json.dumps(want)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"code_execution: row {row_index}: APPS case is not JSON data ({exc})") from None
        tests.append(
            f"import json as _json\n"
            f"_got = {target}(*_json.loads({args_json!r}))\n"
            f"_want = _json.loads({want_json!r})\n"
            "_got = list(_got) if isinstance(_got, tuple) else _got\n"
            "assert _got == _want or (isinstance(_want, list) and len(_want) == 1 and _got == _want[0])\n"
        )
    return tests


class BrokenTestCode(ValueError):
    """A row's gold test code does not compile: every program would score 0 on it."""


def _checked(tests: list[str], row_index: int) -> list[str]:
    for index, code in enumerate(tests):
        problem = _compile_problem(code)
        if problem:
            raise BrokenTestCode(f"code_execution: row {row_index}: test {index} is not valid Python ({problem}); "
                             "fix the data set's test code")
    return tests


@functools.lru_cache(maxsize=4096)
def _compile_problem(code: str) -> str | None:
    # Gold test code that cannot compile would score every program 0 without a word.
    try:
        compile(code, "<test>", "exec", dont_inherit=True)
        code.encode("utf-8")  # a lone surrogate cannot reach the grader intact
    except (SyntaxError, ValueError, UnicodeEncodeError, RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"[:200]
    return None


def _with_check_call(code: str, entry_point) -> str:
    # HumanEval's tests define check(candidate) and leave calling it to the harness.
    if not entry_point or "def check(" not in code:
        return code
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "check":
                return code
    return f"{code}\n\ncheck({entry_point})\n"


def prompt_helpers(prompt, entry_point=None) -> str | None:
    """What the row's prompt defines for the tests besides the function to write, as source.

    HumanEval/32's tests call `poly`, which the prompt defines; bound from the
    completion, a program could redefine it (`return 0`) and pass with a wrong
    answer. The grader runs this source itself and its names win over the
    program's. Left out: the entry point and every stub (a function or class whose
    body is only a docstring, `pass` or `...`), which are for the program to write.
    The prompt is Python, or text (chat turns included) with fenced code blocks.
    """
    text = prompt_text(prompt) if prompt is not None else ""
    return _helpers_of(text, entry_point if isinstance(entry_point, str) else None) if text.strip() else None


@functools.lru_cache(maxsize=1024)  # TRL repeats each prompt once per generation
def _helpers_of(text: str, entry_point: str | None) -> str | None:
    candidates = [text] + [body for _, body, _ in reversed(code_blocks(text))]
    for code in candidates:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        kept, defines = [], False
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                kept.append(node)  # what the helpers themselves use
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name != entry_point and not _is_stub(node):
                    kept.append(node)
                    defines = True
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and getattr(node, "value", None) is not None:
                kept.append(node)
                defines = True
        if defines:
            return ast.unparse(ast.Module(body=kept, type_ignores=[]))
    return None


def _is_stub(node) -> bool:
    # A body of only docstrings, `pass`, `...` or `raise NotImplementedError`: the program's to write.
    for item in node.body:
        if isinstance(item, ast.Pass):
            continue
        if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and \
                (isinstance(item.value.value, str) or item.value.value is Ellipsis):
            continue
        if isinstance(item, ast.Raise) and "NotImplementedError" in ast.unparse(item):
            continue
        if isinstance(node, ast.ClassDef) and isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and _is_stub(item):
            continue
        return False
    return True


@register("code_syntax_valid", aliases=("python_syntax",), family="code")
def code_syntax_valid(completions, **kwargs):
    """1.0 when the completion's Python program compiles, else 0.0; nothing is executed.

    The program is the last ```python (or unlabelled) fenced block, else the whole
    completion; one longer than 64,000 characters scores 0 uncompiled. Uses
    Python's own compiler (syntax and compile-time errors such as `return`
    outside a function), never runs the code. Reads no columns.
    """
    scores = []
    for text in texts(completions):
        program = program_of(text)
        if len(program) > MAX_PROGRAM_CHARS:
            scores.append(0.0)
            continue
        try:
            compile(program, "<completion>", "exec", dont_inherit=True)
            scores.append(1.0)
        except Exception:  # SyntaxError, ValueError (NUL bytes), RecursionError, MemoryError
            scores.append(0.0)
    return scores
