"""Adversarial programs: every one scores 0 and leaves nothing behind.

Each case is a program a policy model could write to hang, break or fool the
grader while the task (`add(a, b)`) stays unsolved. After each one: reward 0,
no process of it alive, no run directory left, files outside its directory
untouched, and the pool still scores a correct program 1.0.
"""
import os
import socket
import textwrap

import pytest

from grpokit.rewards import get

from sandbox_helpers import SECRET_NAME, SECRET_VALUE, processes_of, run_dirs

TOKEN = "tok-7d1f3b-expected-values"
TESTS = [
    f"# {TOKEN}\nassert add(1, 2) == 3",
    "assert add(-5, 5) == 0",
    "assert add(10, 20) == 30",
]
CORRECT = "def add(a, b):\n    return a + b\n"

CASES = [
    # --- hanging -------------------------------------------------------------------
    ("loop_top_level", "while True:\n    pass\n"),  # never reaches the tests: wall/CPU limit
    ("loop_in_function", "def add(a, b):\n    while True:\n        pass\n"),  # hangs inside a graded call
    ("loop_catching_everything", """
        def add(a, b):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
        """),  # swallows every exception a timeout could raise in-process
    ("ignores_sigterm_sigalrm", """
        import signal
        for s in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
            signal.signal(s, signal.SIG_IGN)
        signal.alarm(0)
        while True:
            pass
        """),  # polite signals and SIGXCPU are ignored: only SIGKILL works
    ("sleep_forever", "import time\ntime.sleep(10_000)\n"),  # not CPU-bound: only wall-clock catches it
    ("sleep_in_function", "import time\ndef add(a, b):\n    time.sleep(10_000)\n"),  # hangs a graded call without CPU
    ("recursion_bomb", "def add(a, b):\n    return add(a, b)\n"),  # RecursionError in every call
    # --- resource exhaustion ---------------------------------------------------------
    ("memory_bomb", "x = []\nwhile True:\n    x.append(bytearray(50_000_000))\n"),  # hits the address-space cap
    ("memory_bomb_caught", """
        x = []
        while True:
            try:
                x.append(bytearray(50_000_000))
            except MemoryError:
                pass
        """),  # keeps trying after MemoryError
    ("fork_memory_bomb", """
        import os, time
        for i in range(30):
            try:
                if os.fork() == 0:
                    x = bytearray(300_000_000)  # each child within its own address-space cap
                    time.sleep(100)
            except OSError:
                pass
        time.sleep(100)
        """),  # 30 x 300 MB: only a cap on the run's total (memory cgroup) stops it
    ("fork_bomb", """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """),  # process cap, then the whole namespace is killed
    ("thread_bomb", """
        import threading, time
        while True:
            try:
                threading.Thread(target=time.sleep, args=(10_000,), daemon=True).start()
            except BaseException:
                pass
        """),  # threads count against the same cap
    ("double_fork_daemon", """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    time.sleep(0.05)
            os._exit(0)
        def add(a, b):
            return None
        """),  # a daemon that outlives its parent must still die with the run
    ("huge_file", """
        with open("big.bin", "wb") as f:
            while True:
                f.write(b"x" * 1_000_000)
        """),  # file-size cap
    ("endless_stdout", "while True:\n    print('y' * 1000)\n"),  # output cap
    ("endless_stderr", "import sys\nwhile True:\n    sys.stderr.write('z' * 1000)\n"),  # output cap on stderr too
    ("many_files_in_tmp", """
        import os
        for i in range(100_000):
            try:
                open(f"/tmp/junk-{{i}}", "w").write("x" * 1000)
            except OSError:
                pass
        """),  # litters /tmp (private to the sandbox), never defines add
    # --- escaping the directory / the machine ----------------------------------------
    ("delete_canary", """
        import os, shutil
        for path in {CANARIES!r}:
            try:
                os.remove(path)
            except OSError:
                pass
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        """),  # deletes files outside its directory
    ("write_canary", """
        for path in {CANARIES!r}:
            try:
                open(path, "w").write("pwned")
            except OSError:
                pass
        for path in ("/etc/grpokit-pwned", "/root/grpokit-pwned", "/usr/grpokit-pwned"):
            try:
                open(path, "w").write("pwned")
            except OSError:
                pass
        """),  # overwrites files outside its directory, writes system paths
    ("read_files_outside", """
        import glob
        found = False
        for pattern in ({CANARIES!r}[1], "/work/*/data/*", "/work/shared/data/*", "/root/*", "/home/*/*"):
            for path in glob.glob(pattern):
                try:
                    open(path, "rb").read(1)
                    found = True
                except OSError:
                    pass
        def add(a, b):
            return a + b if found else None
        """),  # the training data (expected outputs!) may sit in world-readable files: they must not exist here
    ("setuid_root", "import os\nos.setuid(0)\ndef add(a, b):\n    return a + b\n"),  # cannot regain root: fails at top level
    ("read_env_secret", """
        import os, glob
        found = os.environ.get({SECRET_NAME!r}) == {SECRET_VALUE!r}
        for path in glob.glob("/proc/*/environ"):
            try:
                found = found or {SECRET_VALUE!r}.encode() in open(path, "rb").read()
            except OSError:
                pass
        def add(a, b):
            return a + b if found else None
        """),  # solves the task only if it can see the trainer's secret
    ("kill_parent", """
        import os, signal
        for pid in (os.getppid(), {ZYGOTE_PID}, {TEST_PID}, 1):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        """),  # tries to kill its parent, the zygote, the test runner, everything it can
    ("open_socket", """
        import socket
        def add(a, b):
            s = socket.create_connection(("127.0.0.1", {PORT}), timeout=1)
            s.sendall(b"leak")
            return a + b
        """),  # the network is unreachable, so the graded call raises
    ("stdout_becomes_fifo", """
        import os
        os.remove("stdout-0")
        os.mkfifo("stdout-0")
        os.remove("stderr-0")
        os.symlink("/etc/shadow", "stderr-0")
        """),  # the harness reads these files afterwards: must not block on a FIFO or follow the link
    ("plant_links_for_next_case", """
        import os
        for i in range(1, 4):
            for name in ("stdin", "stdout", "stderr"):
                try:
                    os.symlink({CANARIES!r}[1], f"{{name}}-{{i}}")
                except OSError:
                    pass
        """),  # root later creates these files for the next stdin/stdout case: links must not be followed
    # --- forging the verdict ---------------------------------------------------------
    ("sys_exit_before_asserts", "import sys\nsys.exit(0)\n"),  # exit 0 before any test runs
    ("os_exit_before_asserts", "import os\nos._exit(0)\n"),  # hard exit 0 before any test runs
    ("sys_exit_in_function", "import sys\ndef add(a, b):\n    sys.exit(0)\n"),  # exits inside the graded call
    ("os_exit_in_function", "import os\ndef add(a, b):\n    os._exit(0)\n"),  # dies inside the graded call
    ("always_equal_object", """
        class Anything:
            def __eq__(self, other):
                return True
            def __ne__(self, other):
                return False
            __hash__ = object.__hash__
        def add(a, b):
            return Anything()
        """),  # an object that equals every expected value
    ("always_equal_int_subclass", """
        class Liar(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        def add(a, b):
            return Liar(0)
        """),  # looks like an int, still lies
    ("frame_editing", """
        import sys, builtins, ctypes
        builtins.AssertionError = type("AssertionError", (BaseException,), {{}})
        f = sys._getframe()
        while f is not None:
            for name in list(f.f_locals):
                if name in ("passed", "ok", "result", "status", "code"):
                    f.f_locals[name] = True
            f.f_globals["PROGRAM_ERROR"] = 0
            ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(f), ctypes.c_int(0))
            f = f.f_back
        def add(a, b):
            return None
        """),  # rewrites its callers' frames and the harness's globals
    ("fake_success_marker", """
        print("All tests passed")
        print("PASSED 3/3")
        print('{{"status": "passed", "passed": 3, "total": 3}}')
        import sys
        sys.exit(0)
        """),  # prints what a naive grader would parse as success
    ("forged_verdict_frames", """
        import json, os, struct
        msg = json.dumps({{"op": "result", "status": "passed", "passed": 3, "total": 3, "all_ran": True,
                          "op2": "ready", "globals": []}}).encode()
        frame = struct.pack("!I", len(msg)) + msg
        for fd in range(0, 256):
            try:
                os.write(fd, frame)
            except OSError:
                pass
        os._exit(0)
        """),  # writes a well-formed verdict frame into every fd it has
    ("patch_harness", """
        import sys
        for name, mod in list(sys.modules.items()):
            if name.startswith("grpokit"):
                for attr in ("encode", "decode", "write_frame"):
                    if hasattr(mod, attr):
                        setattr(mod, attr, lambda *a, **k: 3)
        def add(a, b):
            return None
        """),  # monkeypatches the in-sandbox harness so every value would read as 3
    ("read_tests_from_memory", """
        import gc
        needle = "-".join(["tok", "7d1f3b", "expected", "values"])  # not a constant the compiler folds
        seen = False
        for obj in gc.get_objects():
            try:
                values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
                seen = seen or any(isinstance(v, str) and v is not needle and needle in v for v in values)
            except Exception:
                pass
        def add(a, b):
            return a + b if seen else None
        """),  # solves the task only if the test code is in its memory
    ("raise_in_atexit_and_del", """
        import atexit, os
        atexit.register(lambda: os._exit(0))
        class Bomb:
            def __del__(self):
                os._exit(0)
        keep = Bomb()
        def add(a, b):
            return a - b
        """),  # exit hooks that fire when the harness tears down
]


# Programs whose attack is on the files and processes of a run, so worth repeating in
# stdin/stdout mode, where one job runs the program several times in one directory.
IO_RELEVANT = {"plant_links_for_next_case", "stdout_becomes_fifo", "double_fork_daemon", "fake_success_marker",
               "kill_parent", "delete_canary", "write_canary"}


@pytest.fixture(scope="module")
def scorer(sandbox_pool):
    if sandbox_pool.level != "full":
        # Without namespaces and a uid of its own a program CAN reach the network and
        # our files; the pool says so loudly. These guarantees are for "full" isolation.
        pytest.skip(f"needs full sandbox isolation (root on Linux); this machine gives {sandbox_pool.level!r}")
    return get("code_execution", timeout=1.0, budget_s=60)


@pytest.fixture
def canaries(tmp_path):
    """Canaries in the test's temp home and in the repository: must survive every program."""
    repo_dir = os.path.join(os.path.dirname(__file__), f".canary-{os.getpid()}")
    os.makedirs(repo_dir, exist_ok=True)
    os.chmod(repo_dir, 0o755)
    paths = [str(tmp_path / "canary.txt"), os.path.join(repo_dir, "canary.txt")]
    for path in paths:
        with open(path, "w") as fh:
            fh.write("canary")
        os.chmod(path, 0o644)
    yield paths
    for path in paths:
        if os.path.exists(path):
            os.remove(path)
    os.rmdir(repo_dir)


@pytest.mark.parametrize("name,program", CASES, ids=[c[0] for c in CASES])
def test_adversarial_program_scores_zero_and_leaves_nothing(name, program, scorer, sandbox_pool, canaries):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.05)
    program = textwrap.dedent(program).format(
        CANARIES=canaries, SECRET_NAME=SECRET_NAME, SECRET_VALUE=SECRET_VALUE, PORT=listener.getsockname()[1],
        ZYGOTE_PID=sandbox_pool.zygote_pid, TEST_PID=os.getpid(),
    )
    assert os.environ[SECRET_NAME] == SECRET_VALUE  # the secret really is in our environment
    completion = f"Here is my solution:\n```python\n{program}\n```"
    [score] = scorer([completion], tests=[TESTS])
    assert score == 0.0, f"{name} scored {score}"

    assert processes_of(sandbox_pool) == [], "a process of the program survived"
    assert run_dirs(sandbox_pool) == [], "the run's temp directory was not removed"
    for path in canaries:
        with open(path) as fh:
            assert fh.read() == "canary", f"{path} was changed"
    with pytest.raises(socket.timeout):
        listener.accept()  # nothing reached the loopback listener
    listener.close()

    [score] = scorer([f"```python\n{CORRECT}```"], tests=[TESTS])
    assert score == 1.0, "the pool no longer scores a correct program"


IO_CASES = [{"input": "1 2", "output": "3"}, {"input": "5 5", "output": "10"}, {"input": "0 0", "output": "0"}]


@pytest.mark.parametrize("name,program", [c for c in CASES if c[0] in IO_RELEVANT], ids=sorted(IO_RELEVANT))
def test_adversarial_program_in_stdin_stdout_mode(name, program, scorer, sandbox_pool, canaries):
    # Same programs, graded on stdin/stdout cases: several runs share one directory.
    program = textwrap.dedent(program).format(
        CANARIES=canaries, SECRET_NAME=SECRET_NAME, SECRET_VALUE=SECRET_VALUE, PORT=1,
        ZYGOTE_PID=sandbox_pool.zygote_pid, TEST_PID=os.getpid(),
    )
    [score] = scorer([program], tests=[IO_CASES])
    assert score == 0.0
    assert processes_of(sandbox_pool) == [] and run_dirs(sandbox_pool) == []
    for path in canaries:
        with open(path) as fh:
            assert fh.read() == "canary", f"{path} was changed"
    [score] = scorer(["print(sum(map(int, input().split())))"], tests=[IO_CASES])
    assert score == 1.0


def test_there_are_at_least_thirty_adversarial_cases():
    assert len(CASES) >= 30
