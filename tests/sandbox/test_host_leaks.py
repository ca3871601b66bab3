"""Leaks past a run and denial of service through the grader.

Programs here try to leave something behind on the host or in their worker
slot (SysV IPC objects, kernel keys, sockets the network namespace does not
cover, files too deep to delete, a full work directory), to talk to another
run, or to make the grader or a worker hold memory or time. Each scores 0,
leaves nothing, and the next program in every slot still scores 1.0.
"""
import textwrap
import time

import pytest

from grpokit.rewards import get
from grpokit.sandbox import Job, Limits
from sandbox_helpers import SLOT_PROBE, keys_of, processes_of, run_dirs, sysv_ipc_objects

TESTS = ["assert add(1, 2) == 3", "assert add(-5, 5) == 0"]
CORRECT = "def add(a, b):\n    return a + b\n"

_LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def _with_libc(body: str) -> str:
    return _LIBC + textwrap.dedent(body)

LEAKS = [
    ("sysv_shared_memory_touched", _with_libc("""
        libc.shmat.restype = ctypes.c_void_p
        shm = libc.shmget(0x6B1D, 200 * 1024 * 1024, 0o1666)
        addr = libc.shmat(shm, None, 0)
        if addr not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(addr, 1, 200 * 1024 * 1024)  # resident, and charged to the slot
        def add(a, b):
            return None
        """)),  # used to outlive the run and make the slot's next honest program fail
    ("sysv_semaphores_and_queues", _with_libc("""
        for key in range(0x5E00, 0x5E10):
            libc.semget(key, 16, 0o1666)
            libc.msgget(key, 0o1666)
        def add(a, b):
            return None
        """)),
    ("vsock_and_other_families", """
        import socket
        opened = []
        for family in ("AF_VSOCK", "AF_INET", "AF_INET6", "AF_PACKET", "AF_NETLINK", "AF_BLUETOOTH", "AF_ALG"):
            try:
                s = socket.socket(getattr(socket, family), socket.SOCK_DGRAM)
                if family == "AF_VSOCK":
                    s.bind((socket.VMADDR_CID_ANY, 5555))
                opened.append(s)
            except (OSError, AttributeError):
                pass
        def add(a, b):
            return a + b if opened else None
        """),  # solves the task only if a socket outside AF_UNIX could be opened
    ("kernel_keyrings", _with_libc("""
        # add_key("user", "grpokit-leak", ..., KEY_SPEC_USER_KEYRING / SESSION)
        made = [libc.syscall(248, b"user", b"grpokit-leak", b"payload", 7, ring) for ring in (-4, -3, -5)]
        def add(a, b):
            return a + b if max(made) > 0 else None
        """)),  # a key in the slot uid's keyring would be read by the slot's next program
    ("deep_long_paths_in_home_and_shm", """
        import os
        for base in (".", "/dev/shm"):
            try:
                fd = os.open(base, os.O_RDONLY)
                for _ in range(60):  # 60 x 251 bytes: far past PATH_MAX
                    os.mkdir("d" * 250, dir_fd=fd)
                    nxt = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
                    os.close(fd)
                    fd = nxt
                    open(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd), "w").write("x")
            except OSError:
                pass
        def add(a, b):
            return None
        """),  # used to survive cleanup
    ("fill_home_and_shm_inodes", """
        import os
        for base in (".", "/dev/shm", "/tmp"):
            for i in range(20_000):
                try:
                    open(f"{base}/n{i}", "w").close()
                except OSError:
                    break
        def add(a, b):
            return None
        """),  # used to make the zygote's next mkdir fail and the batch score None
    ("escape_the_home", """
        import os
        home = os.getcwd()
        for target in (home + "/..", "/tmp", "/var/tmp", home + "/../stdout-0"):
            try:
                open(target + "/planted", "w").write("x")
            except OSError:
                pass
        try:
            os.chmod(home, 0o777)
            os.rename(home, home + "-moved")
        except OSError:
            pass
        def add(a, b):
            return None
        """),  # the harness's files and the shared scratch dirs are out of reach
]


@pytest.fixture(scope="module")
def scorer(sandbox_pool):
    if sandbox_pool.level != "full":
        pytest.skip(f"needs full sandbox isolation (root on Linux); this machine gives {sandbox_pool.level!r}")
    return get("code_execution", timeout=2.0, budget_s=60)


def _assert_nothing_left(pool, scorer):
    assert processes_of(pool) == [], "a process of the program survived"
    assert run_dirs(pool) == [], "files of the run were left behind"
    assert sysv_ipc_objects(pool) == [], "a SysV IPC object outlived the run"
    assert keys_of(pool) == [], "a sandbox uid holds kernel keys"
    # Every slot, not only the one the attack ran in, sees nothing and grades correctly.
    probes = pool.run([Job(SLOT_PROBE, tests=["assert leftovers() == []"])] * (2 * pool.workers))
    assert [r.status for r in probes] == ["passed"] * len(probes), [r.error for r in probes]
    assert scorer([CORRECT] * pool.workers, tests=[TESTS] * pool.workers) == [1.0] * pool.workers


@pytest.mark.parametrize("name,program", LEAKS, ids=[c[0] for c in LEAKS])
def test_leaks_score_zero_and_leave_nothing(name, program, scorer, sandbox_pool):
    zygote = sandbox_pool.zygote_pid
    [score] = scorer([textwrap.dedent(program)], tests=[TESTS])
    assert score == 0.0
    _assert_nothing_left(sandbox_pool, scorer)
    assert sandbox_pool.zygote_pid == zygote, "the zygote died and was restarted"


def test_concurrent_runs_cannot_meet_on_an_abstract_socket(sandbox_pool):
    if not sandbox_pool.isolation.get("run_scope"):
        pytest.skip("Landlock scoping needs Linux 6.12+")
    listener = textwrap.dedent("""
        import socket, time
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind("\\0grpokit-covert-channel")
        s.listen(1)
        time.sleep(1.0)
        def add(a, b):
            return a + b
        """)
    caller = textwrap.dedent("""
        import socket, time
        time.sleep(0.3)
        try:
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("\\0grpokit-covert-channel")
            reached = True
        except OSError:
            reached = False
        def add(a, b):
            return a + b if reached else None
        """)
    limits = Limits(wall_s=3)
    listen, call = sandbox_pool.run([Job(listener, tests=TESTS, limits=limits), Job(caller, tests=TESTS, limits=limits)])
    assert listen.score == 1.0 and call.score == 0.0, (listen.error, call.error)


def _grader_peak_mb(pool) -> list[float]:
    import os

    peaks = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/comm") as fh:
                if fh.read().strip() != "grpokit-grader":
                    continue
            with open(f"/proc/{entry}/status") as fh:
                peaks += [int(line.split()[1]) / 1024 for line in fh if line.startswith("VmHWM")]
        except OSError:
            continue
    return peaks


_RAW_REPLY = """
import gc, os, struct
server = next(o for o in gc.get_objects() if type(o).__name__ == "_Server")
def add(a, b):
    return None
def reply(body):
    os.write(server.resp_fd, struct.pack("!I", len(body)) + body)
"""

GRADER_DOS = [
    ("reply_of_30_mb_nested_lists", _RAW_REPLY + """
server.send = lambda message: reply(b'{"v": [' + b"[]," * 10_000_000 + b"[]]}")
"""),  # decoded, ~25x its size: past the reply cap, refused before it is read
    ("reply_just_under_the_cap", _RAW_REPLY + """
server.send = lambda message: reply(b'{"v": [' + b"[[]]," * 1_600_000 + b"[]]}")
"""),  # under the cap: decoded within the grader's own memory limit
    ("deeply_nested_reply", _RAW_REPLY + """
server.send = lambda message: reply(b'{"v": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
"""),  # recursion in the decoder: refused, not a grader crash
]


@pytest.mark.parametrize("name,program", GRADER_DOS, ids=[c[0] for c in GRADER_DOS])
def test_replies_cannot_blow_up_the_grader(name, program, scorer, sandbox_pool):
    [score] = scorer([program], tests=[TESTS])
    assert score == 0.0
    assert max(_grader_peak_mb(sandbox_pool) or [0]) < 600, "a grader grew past its bound"
    _assert_nothing_left(sandbox_pool, scorer)


def test_slow_stdin_stdout_program_cannot_hold_a_worker(sandbox_pool, load_slack):
    # Just under the per-case limit, ten times: the program's total budget (3 x wall_s) ends it.
    slow = "import time\ntime.sleep(0.9)\nprint(sum(map(int, input().split())))"
    cases = [{"input": "1 2", "output": "3"}] * 10
    honest = Job("print(sum(map(int, input().split())))", cases=cases, limits=Limits(wall_s=1))
    slack = load_slack(lambda: sandbox_pool.run([honest], budget_s=30))
    start = time.monotonic()
    results = sandbox_pool.run([Job(slow, cases=cases, limits=Limits(wall_s=1)), honest, honest], budget_s=30)
    assert time.monotonic() - start < 6.0 + slack  # 3 x wall_s ends it, not its 10 x 0.9 s of sleeping
    assert [r.score for r in results] == [0.0, 1.0, 1.0], [(r.status, r.error) for r in results]
    assert results[0].status == "timeout"
    assert processes_of(sandbox_pool) == [] and run_dirs(sandbox_pool) == []
