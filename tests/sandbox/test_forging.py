"""Forged passes: wrong programs that steer the grader instead of solving the task score 0.

Each family is a way a policy could raise its reward without a correct `add`:
shadowing the names the test code calls, answering the grading protocol with
control-flow replies, sleeping until the grader's own timeout fires inside the
test code, or breaking the protocol so the sample becomes unscorable (None).
After every program: score 0 (never None), the host checks of the adversarial
suite, no SysV IPC object or key left, and a correct program still scores 1.0.
"""
import textwrap

import pytest

from grpokit.rewards import get
from sandbox_helpers import SLOT_PROBE, keys_of, processes_of, run_dirs, sysv_ipc_objects

CORRECT = "import math\ndef add(a, b):\n    return a + b\n"

# Tests that lean on builtins and on the solution's `import math` (as MBPP's do):
# a program that could rebind those names would pass them with a wrong `add`.
NAME_TESTS = [
    "assert abs(add(-5, 2)) == 3",
    "assert all(add(i, i) == 2 * i for i in range(1, 4))",
    "assert math.isclose(add(0.1, 0.2), 0.3)",
    "for i in range(3):\n    assert add(i, 1) == i + 1",
    "assert isinstance(add(1, 1), int) and len([add(1, 2)]) == 1 and add(1, 2) == 3",
    "assert sorted(set([add(2, 2), add(1, 3)])) == [4]",
]

NAME_SHADOWING = [
    ("shadow_abs_and_all", """
        def add(a, b):
            return 0
        def abs(x):
            return 3
        def all(xs):
            return True
        """),  # the HumanEval/4 attack: a constant answer plus a lying abs
    ("shadow_range_len_isinstance", """
        range = lambda *args: []
        len = lambda x: 1
        isinstance = lambda *args: True
        def add(a, b):
            return None
        """),  # loops over nothing, type checks that always agree
    ("class_named_like_a_module", """
        class math:
            @staticmethod
            def isclose(*args, **kwargs):
                return True
        def add(a, b):
            return 0.0
        """),  # tests that use `math` without importing it would call this class
    ("module_alias_to_a_fake", """
        import types
        math = types.ModuleType("math")
        math.isclose = lambda *a, **k: True
        def add(a, b):
            return -1
        """),  # a module object named math, not the real one: the grader imports its own
    ("real_module_under_another_name", """
        import cmath as math
        import operator as abs
        def add(a, b):
            return 0.3 + 0j
        """),  # cmath.isclose accepts the complex answer that math.isclose refuses
    ("shadow_set_and_sorted", """
        set = lambda xs: [4]
        sorted = lambda xs: [4]
        all = any = lambda xs: True
        def add(a, b):
            return 7
        """),  # containers and reducers that return what the asserts expect
    ("builtins_module_patched", """
        import builtins
        builtins.abs = lambda x: 3
        builtins.all = lambda xs: True
        builtins.range = lambda *a: []
        def add(a, b):
            return 0
        """),  # patches its own builtins module: the tests' builtins live in the grader
]

# Tests written so that a control-flow signal crossing over would make them pass:
# map/filter read StopIteration as "no more items", and a bare except swallows anything.
PROTOCOL_TESTS = [
    "assert all(map(lambda x: add(x, 0) == x, [1, 2, 3]))",
    "assert list(filter(lambda x: add(x, x) != 2 * x, [1, 2])) == []",
    "try:\n    assert add(1, 2) == 3\nexcept BaseException:\n    pass\nassert add(2, 2) == 4",
]

_FIND_SERVER = """
import gc
server = next(o for o in gc.get_objects() if type(o).__name__ == "_Server")
"""


def _steer(body: str) -> str:
    # The program finds its own end of the grading protocol, then does `body`.
    return _FIND_SERVER + textwrap.dedent(body)

PROTOCOL_STEERING = [
    ("every_call_answers_stop", _steer("""
        server.handle = lambda request: {"stop": True}
        def add(a, b):
            return None
        """)),  # StopIteration in map() would end the iteration: all([]) is True
    ("stop_iteration_as_exception", _steer("""
        server.handle = lambda request: {"exc": "StopIteration", "msg": ""}
        def add(a, b):
            return None
        """)),  # the same signal, dressed as an exception of the function
    ("reply_with_extra_keys", _steer("""
        server.handle = lambda request: {"v": 3, "stop": True, "back": "x"}
        def add(a, b):
            return None
        """)),  # a reply of no shape the grader knows
    ("reply_of_wrong_types", _steer("""
        answers = iter([{"ref": "1", "callable": 1}, {"exc": 5, "msg": None}, {"v": {"untagged": 1}}] * 10)
        server.handle = lambda request: next(answers)
        def add(a, b):
            return None
        """)),  # references, exceptions and values that are not what they claim
    ("generator_exit_and_keyboard_interrupt", _steer("""
        names = iter(["GeneratorExit", "KeyboardInterrupt", "SystemExit", "StopAsyncIteration"] * 5)
        server.handle = lambda request: {"exc": next(names), "msg": ""}
        def add(a, b):
            return None
        """)),  # control-flow exceptions never cross: they arrive as plain failures
]

DEADLINE_GAMES = [
    ("sleep_in_call", "import time\ndef add(a, b):\n    time.sleep(30)\n"),  # the grader's timeout used to fire in the test
    ("spin_in_call", "def add(a, b):\n    while True:\n        pass\n"),  # same, CPU-bound
    ("slow_only_on_second_test", """
        import time
        calls = []
        def add(a, b):
            calls.append(1)
            if len(calls) > 1:
                time.sleep(30)
            return a + b
        """),  # passes the first test honestly, then stalls the rest
    ("correct_but_stalls_before_ready", """
        import signal, time
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        def add(a, b):
            return a + b
        time.sleep(30)
        """),  # a right answer the tests never get to: the program timed out as a whole
]

UNSCORABLE = [
    ("malformed_ready_frame", _steer("""
        import os, struct
        data = b'{"op": "ready", "globals": 5}'
        os.write(server.resp_fd, struct.pack("!I", len(data)) + data)
        os._exit(0)
        """)),  # used to escape as a grader error (None): now the program's failure
    ("malformed_globals_entry", _steer("""
        import os, struct
        data = b'{"op": "ready", "globals": [["add", 5], [1, 2, 3]]}'
        os.write(server.resp_fd, struct.pack("!I", len(data)) + data)
        server.serve()
        """)),
    ("ready_then_garbage", _steer("""
        import os, struct
        data = b'{"op": "ready", "globals": [["add", {"ref": 1, "callable": true}]]}'
        os.write(server.resp_fd, struct.pack("!I", len(data)) + data + b"\\xff" * 64)
        server.serve()
        """)),  # a valid ready report followed by bytes that are no frame
    ("oversized_frame_header", _steer("""
        import os, struct
        os.write(server.resp_fd, struct.pack("!I", 2**31))
        os._exit(0)
        """)),
    ("error_report_of_wrong_shape", _steer("""
        import os, struct
        data = b'{"op": "error", "type": ["x"], "msg": {"a": 1}}'
        os.write(server.resp_fd, struct.pack("!I", len(data)) + data)
        os._exit(0)
        """)),
]


@pytest.fixture(scope="module")
def scorer(sandbox_pool):
    if sandbox_pool.level != "full":
        pytest.skip(f"needs full sandbox isolation (root on Linux); this machine gives {sandbox_pool.level!r}")
    return get("code_execution", timeout=1.0, budget_s=60)


def _score(scorer, program: str, tests: list[str]) -> float | None:
    [score] = scorer([f"```python\n{textwrap.dedent(program)}\n```"], tests=[tests])
    return score


def _assert_host_clean(scorer, pool, tests):
    assert processes_of(pool) == [], "a process of the program survived"
    assert run_dirs(pool) == [], "files of the run were left behind"
    assert sysv_ipc_objects(pool) == [] and keys_of(pool) == []
    assert _score(scorer, CORRECT, tests) == 1.0, "the pool no longer scores a correct program"


def test_honest_program_passes_the_name_tests(scorer):
    # The tests really are passable: `math` comes from the solution's own import.
    assert _score(scorer, CORRECT, NAME_TESTS) == 1.0


@pytest.mark.parametrize("name,program", NAME_SHADOWING, ids=[c[0] for c in NAME_SHADOWING])
def test_shadowing_names_the_tests_use_scores_zero(name, program, scorer, sandbox_pool):
    assert _score(scorer, program, NAME_TESTS) == 0.0
    _assert_host_clean(scorer, sandbox_pool, NAME_TESTS)


@pytest.mark.parametrize("name,program", PROTOCOL_STEERING, ids=[c[0] for c in PROTOCOL_STEERING])
def test_steering_the_protocol_scores_zero(name, program, scorer, sandbox_pool):
    assert _score(scorer, program, PROTOCOL_TESTS) == 0.0
    _assert_host_clean(scorer, sandbox_pool, PROTOCOL_TESTS)


@pytest.mark.parametrize("name,program", DEADLINE_GAMES, ids=[c[0] for c in DEADLINE_GAMES])
def test_outliving_the_deadline_scores_zero(name, program, scorer, sandbox_pool):
    # Both tests swallow every exception: a timeout raised inside test code would let them pass.
    swallowing = ["try:\n    assert add(1, 2) == 3\nexcept:\n    pass", "try:\n    add(2, 2)\nexcept:\n    pass"]
    assert _score(scorer, program, swallowing) == 0.0
    _assert_host_clean(scorer, sandbox_pool, PROTOCOL_TESTS)


@pytest.mark.parametrize("name,program", UNSCORABLE, ids=[c[0] for c in UNSCORABLE])
def test_breaking_the_protocol_scores_zero_not_none(name, program, scorer, sandbox_pool):
    assert _score(scorer, program, PROTOCOL_TESTS) == 0.0
    _assert_host_clean(scorer, sandbox_pool, PROTOCOL_TESTS)


IO_CASES = [{"input": "1 2", "output": "3"}, {"input": "5 5", "output": "10"}, {"input": "0 0", "output": "0"}]

IO_SABOTAGE = [
    ("dirs_where_next_case_files_go", """
        import os
        for i in range(1, 4):
            for name in ("stdin", "stdout", "stderr"):
                for where in ("..", "."):
                    try:
                        os.makedirs(f"{where}/{name}-{i}/x")
                    except OSError:
                        pass
        print("no answer")
        """),  # used to turn the next case into a sandbox error: None instead of 0
    ("replace_own_home", """
        import os, shutil
        home = os.getcwd()
        os.chdir("/")
        shutil.rmtree(home, ignore_errors=True)
        try:
            os.rmdir(home)
        except OSError:
            pass
        print("no answer")
        """),  # the next case must still find somewhere to run
    ("fill_home_inodes", """
        import os
        for i in range(20000):
            try:
                open(f"f{i}", "w").close()
            except OSError:
                break
        print("no answer")
        """),  # runs out of inodes in its own capped home, not anyone else's
]


@pytest.mark.parametrize("name,program", IO_SABOTAGE, ids=[c[0] for c in IO_SABOTAGE])
def test_sabotaging_later_cases_scores_zero_not_none(name, program, scorer, sandbox_pool):
    [score] = scorer([textwrap.dedent(program)], tests=[IO_CASES])
    assert score == 0.0
    assert processes_of(sandbox_pool) == [] and run_dirs(sandbox_pool) == []
    [score] = scorer(["print(sum(map(int, input().split())))"], tests=[IO_CASES])
    assert score == 1.0


def test_slots_are_clean_for_the_next_program(scorer, sandbox_pool):
    # What a program in any slot can still see after the attacks above: nothing.
    from grpokit.sandbox import Job

    results = sandbox_pool.run([Job(SLOT_PROBE, tests=["assert leftovers() == []"])] * (2 * sandbox_pool.workers))
    assert [r.status for r in results] == ["passed"] * len(results), [r.error for r in results]
