"""The sandbox's working parts: values, grading, stdin/stdout, budget, lifecycle, isolation."""
import math
import os
import time
import warnings

import pytest
from sandbox_helpers import processes_of, run_dirs

from grpokit.sandbox import Job, Limits, SandboxPool, codec

# ---- type-strict values ---------------------------------------------------------

ROUND_TRIP = [
    (3, "int"),
    (True, "bool stays bool, not 1"),
    (2.5, "float"),
    (math.inf, "infinity has no JSON form"),
    (10**400, "big ints survive"),
    ((1, [2, (3,)]), "tuple vs list distinguished at every depth"),
    ({(1, 2): {"a": None}}, "non-string dict keys"),
    ({1, 2}, "set"),
    (frozenset({"x"}), "frozenset"),
    (b"\x00\xff", "bytes"),
    (1 + 2j, "complex"),
    ("\ud800", "lone surrogate in a string"),
]


@pytest.mark.parametrize("value,why", ROUND_TRIP, ids=[w for _, w in ROUND_TRIP])
def test_codec_round_trips_exact_types(value, why):
    back = codec.decode(codec.loads(codec.dumps(codec.encode(value))[4:]))
    assert back == value and type(back) is type(value)


def test_codec_nan_round_trips():
    assert math.isnan(codec.decode(codec.encode(math.nan)))


UNENCODABLE = [
    (type("Liar", (int,), {"__eq__": lambda s, o: True})(1), "int subclass: could lie in =="),
    (object(), "arbitrary object"),
    ((x for x in ()), "generator"),
    ([1, object()], "non-data nested in a list"),
]


@pytest.mark.parametrize("value,why", UNENCODABLE, ids=[w for _, w in UNENCODABLE])
def test_codec_refuses_non_data(value, why):
    with pytest.raises(codec.Unencodable):
        codec.encode(value)


BAD_WIRE = [
    ({"a": 1}, "untagged object: the sandbox never sends one"),
    ({"~": "pickle", "v": "..."}, "unknown tag"),
    ({"~": "ref", "v": 1}, "references are only resolved on the sandbox side"),
    ({"~": "set", "v": [[1]]}, "unhashable set member"),
    ({"~": "float", "v": "1e999999"}, "only nan/inf travel as strings"),
]


@pytest.mark.parametrize("wire,why", BAD_WIRE, ids=[w for _, w in BAD_WIRE])
def test_codec_rejects_malformed_wire_values(wire, why):
    with pytest.raises(codec.ProtocolError):
        codec.decode(wire)


# ---- grading ----------------------------------------------------------------------

GRADING = [
    # (program, tests, expected passed, why)
    ("def f(x):\n    return x * 2\n", ["assert f(2) == 4", "assert f(3) == 7"], 1, "share of asserts"),
    ("def f(x):\n    if x < 0:\n        raise ValueError('neg')\n    return x\n",
     ["try:\n    f(-1)\n    raise AssertionError\nexcept ValueError:\n    pass"], 1, "builtin exceptions cross over"),
    ("def srt(xs):\n    xs.sort()\n", ["a = [3, 1, 2]\nsrt(a)\nassert a == [1, 2, 3]"], 1, "in-place mutation is seen"),
    ("class Solution:\n    def twoSum(self, xs, t):\n        return [0, 1]\n",
     ["assert Solution().twoSum([2, 7], 9) == [0, 1]"], 1, "LeetCode-style classes via handles"),
    ("def gen(n):\n    yield from range(n)\n", ["assert list(gen(3)) == [0, 1, 2]"], 1, "generators iterate remotely"),
    ("LIMIT = 10\n", ["assert LIMIT == 10", "assert type(LIMIT) is int"], 2, "module constants are values"),
    ("def f():\n    return 1\n", ["assert f() is True"], 0, "1 is not True: types are kept"),
    ("def f():\n    return (1, 2)\n", ["assert f() == [1, 2]"], 0, "tuple is not list"),
    ("import hashlib, fractions, statistics, decimal\ndef md5(s):\n    return hashlib.md5(s.encode()).hexdigest()\n",
     ["assert md5('a') == '0cc175b9c0f1b6a831c399e269772661'"], 1,
     "modules the zygote did not preload import fine (even when Python lives in a private home)"),
    ("def f():\n    return input()\n", ["assert f() == ''"], 0, "stdin is closed: input() raises EOFError"),
    ("import os\ndef env():\n    return sorted(os.environ)\n",
     ["assert set(env()) <= {'PATH', 'LANG', 'LC_ALL', 'PYTHONIOENCODING', 'USER', 'HOME', 'TMPDIR'}"], 1,
     "the environment is scrubbed"),
]


@pytest.mark.parametrize("program,tests,passed,why", GRADING, ids=[g[3] for g in GRADING])
def test_grading(program, tests, passed, why, sandbox_pool):
    [result] = sandbox_pool.run([Job(program, tests=tests, limits=Limits(wall_s=3))])
    assert result.passed == passed, (result.status, result.error, result.stderr)
    assert result.total == len(tests)
    assert result.all_ran


def test_runs_are_isolated_as_reported(sandbox_pool):
    if sandbox_pool.level != "full":
        # e.g. not root, or a container without CAP_SYS_ADMIN; the pool has warned about it.
        pytest.skip(f"full isolation unavailable here: {sandbox_pool.isolation.get('notes')}")
    program = "import os\ndef ids():\n    return [os.getpid(), os.getuid(), os.getcwd()]\n"
    [result] = sandbox_pool.run([Job(program, tests=[
        "pid, uid, cwd = ids()\nassert pid == 1\nassert uid != 0\nassert cwd.rsplit('/', 1)[-1].startswith('home-')"])])
    assert result.status == "passed", (result.error, result.stderr)
    assert result.isolation == "full"


IO = [
    ("print(int(input()) * 2)", [{"input": "3\n", "output": "6\n"}, {"input": "5", "output": "10"}], 2, "stdin fed, stdout compared"),
    ("print(int(input()) * 2)", [{"input": "3", "output": "7"}], 0, "wrong output"),
    ("print('6  ')\nprint()", [{"input": "", "output": "6"}], 1, "trailing whitespace and blank lines ignored"),
    ("import sys\nprint(6)\nsys.exit(3)", [{"input": "", "output": "6"}], 0, "a non-zero exit fails the case"),
    ("import sys\nprint(6)\nsys.exit(0)", [{"input": "", "output": "6"}], 1, "an explicit exit 0 is fine"),
    ("while True: pass", [{"input": "", "output": ""}], 0, "each case has its own time limit"),
]


@pytest.mark.parametrize("program,cases,passed,why", IO, ids=[c[3] for c in IO])
def test_stdin_stdout_cases(program, cases, passed, why, sandbox_pool):
    [result] = sandbox_pool.run([Job(program, cases=cases, limits=Limits(wall_s=1))])
    assert result.passed == passed and result.total == len(cases), (result.status, result.error)
    assert processes_of(sandbox_pool) == [] and run_dirs(sandbox_pool) == []


# ---- throughput controls and lifecycle -------------------------------------------

def test_step_budget_cancels_slow_programs(sandbox_pool, load_slack):
    slow = Job("import time\ntime.sleep(30)\n", tests=["assert True"], limits=Limits(wall_s=30))
    slack = load_slack(lambda: sandbox_pool.run([Job("x = 1\n", tests=["assert x == 1"])] * 5, budget_s=30))
    start = time.monotonic()
    results = sandbox_pool.run([slow] * 5, budget_s=1.0)
    assert time.monotonic() - start < 4.0 + slack  # the 1 s budget, far below the programs' 30 s
    assert {r.status for r in results} == {"cancelled"}
    assert all(r.score is None for r in results)  # not the model's fault: skipped, not 0
    assert processes_of(sandbox_pool) == []
    [ok] = sandbox_pool.run([Job("x = 1", tests=["assert x == 1"])])
    assert ok.status == "passed"


def test_pool_restarts_after_its_zygote_dies():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with SandboxPool(workers=1) as pool:
            pool.isolation  # starts it
            first = pool.zygote_pid
            os.kill(first, 9)
            time.sleep(0.2)
            [result] = pool.run([Job("x = 1", tests=["assert x == 1"])])
            assert result.status == "passed" and pool.zygote_pid != first


def test_close_stops_the_zygote():
    pool = SandboxPool(workers=1)
    pool.isolation  # starts it
    pid = pool.zygote_pid
    pool.close()
    assert not os.path.exists(f"/proc/{pid}")  # exited and reaped


def test_basic_isolation_still_kills_a_double_forked_daemon():
    daemon = (
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        open('/proc/self/comm', 'w').write('grpokit-daemon')\n        time.sleep(60)\n    os._exit(0)\n"
        "time.sleep(0.3)\n"
        "def f():\n    return 1\n"
    )
    with pytest.warns(RuntimeWarning, match="isolation"):
        pool = SandboxPool(workers=1, isolation="basic")
        pool.isolation
    with pool:
        [result] = pool.run([Job(daemon, tests=["assert f() == 1"])])
        assert result.status == "passed" and result.isolation == "basic"
        survivors = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/comm") as fh:
                    if fh.read().strip() == "grpokit-daemon":
                        survivors.append(entry)
            except OSError:
                pass
        assert survivors == []


LIMIT_ERRORS = [
    ({"wall_s": 0}, "wall_s"),
    ({"memory_mb": 10}, "memory_mb"),
    ({"max_processes": 0}, "max_processes"),
]


@pytest.mark.parametrize("kwargs,field", LIMIT_ERRORS, ids=[f for _, f in LIMIT_ERRORS])
def test_limits_are_validated_with_the_field_named(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Limits(**kwargs)


def test_a_stuck_grader_is_replaced(sandbox_pool):
    # Test code is trusted, but a broken one (here: blocks the grader's own alarm and
    # spins) must not wedge a worker slot: the zygote's backstop kills and replaces it.
    stuck = ("import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
             "while True:\n    pass\n")
    [result] = sandbox_pool.run([Job("x = 1", tests=[stuck], limits=Limits(wall_s=0.5))])
    assert result.status == "timeout"
    results = sandbox_pool.run([Job("x = 1", tests=["assert x == 1"])] * 4)
    assert [r.status for r in results] == ["passed"] * 4
    assert processes_of(sandbox_pool) == []


def test_a_forked_trainer_process_gets_its_own_zygote(sandbox_pool):
    sandbox_pool.run([Job("x = 1", tests=["assert x == 1"])])
    parent_zygote = sandbox_pool.zygote_pid
    pid = os.fork()
    if pid == 0:  # e.g. a DataLoader worker that inherited the pool object
        code = 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                [result] = sandbox_pool.run([Job("x = 2", tests=["assert x == 2"])])
            code = 0 if result.status == "passed" and sandbox_pool.zygote_pid != parent_zygote else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    [result] = sandbox_pool.run([Job("x = 3", tests=["assert x == 3"])])  # ours still works
    assert result.status == "passed" and sandbox_pool.zygote_pid == parent_zygote
