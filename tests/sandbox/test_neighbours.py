"""Concurrent runs cannot hurt each other, and the grader's own failures never score 0.

A program graded next to others may try to sink them (under GRPO a sample that
makes its siblings fail raises its own advantage): spin on every core from
setsid'd children, fill or read /dev/shm, or bloat the slot's long-lived grader
until a later honest program's value no longer fits. Each test pairs such a
program with an honest one and checks the honest one keeps its score.
"""
import os
import textwrap

import pytest

from grpokit.sandbox import Job, Limits, SandboxPool


def _program(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# Passes its own test while 24 children, each in a session of its own where it may make
# one (a session is the kernel's unit of CPU sharing), spin on every core.
SPINNER = _program("""
    import os, time
    for _ in range(24):
        if os.fork() == 0:
            try:
                os.setsid()
            except OSError:
                pass
            while True:
                pass
    def ok():
        time.sleep(30)
        return 1
""")

# Needs half a CPU-second of its own (measured by its own CPU clock, so the verdict
# does not depend on how loaded the machine is), far below its 4 s limit.
HONEST_CPU = _program("""
    import time
    def work():
        start, n = time.process_time(), 0
        while time.process_time() - start < 0.5:
            n += 1
        return n > 0
""")


def test_spinning_sibling_cannot_push_an_honest_program_past_its_limit(sandbox_pool):
    if not sandbox_pool.isolation.get("cpu_cgroup"):
        pytest.skip("no per-run CPU cgroup on this machine: " + "; ".join(sandbox_pool.isolation.get("notes", [])))
    spinner = Job(SPINNER, tests=["assert ok() == 1"], limits=Limits(wall_s=10))
    honest = Job(HONEST_CPU, tests=["assert work()"], limits=Limits(wall_s=4))
    results = sandbox_pool.run([spinner, honest, honest], budget_s=120)
    for result in results[1:]:
        assert (result.status, result.score) == ("passed", 1.0), result
    # Its children count against its own run: it runs out of CPU time (or, on a machine too
    # busy to give it that much CPU, of its wall-clock backstop), never passes.
    assert results[0].status == "timeout", results[0]


def test_runs_cannot_start_sessions_of_their_own(sandbox_pool):
    # With the kernel's per-session CPU sharing, each run is one session: its children
    # may not make more (one share per run, however many processes it forks).
    if sandbox_pool.isolation.get("cpu_share") != "session":
        pytest.skip(f"CPU shared per run by {sandbox_pool.isolation.get('cpu_share')!r}, not by session")
    program = _program("""
        import os
        def child_setsid():
            pid = os.fork()
            if pid == 0:
                try:
                    os.setsid()
                    os._exit(0)
                except OSError as exc:
                    os._exit(exc.errno)
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    """)
    [result] = sandbox_pool.run([Job(program, tests=["import errno\nassert child_setsid() == errno.EPERM"])])
    assert result.score == 1.0, result


def test_spinning_sibling_cannot_time_out_an_honest_stdin_stdout_program(sandbox_pool):
    if not sandbox_pool.isolation.get("cpu_cgroup"):
        pytest.skip("no per-run CPU cgroup on this machine: " + "; ".join(sandbox_pool.isolation.get("notes", [])))
    spinner = SPINNER + "ok()\nprint(3)\n"
    honest = HONEST_CPU + "work()\nprint(sum(map(int, input().split())))\n"
    case = [{"input": "1 2", "output": "3"}]
    results = sandbox_pool.run([Job(spinner, cases=case, limits=Limits(wall_s=10)),
                                Job(honest, cases=case, limits=Limits(wall_s=4)),
                                Job(honest, cases=case, limits=Limits(wall_s=4))], budget_s=120)
    for result in results[1:]:
        assert (result.status, result.score) == ("passed", 1.0), result
    assert results[0].status == "timeout", results[0]


def test_a_program_that_only_sleeps_times_out_on_the_wall_clock(sandbox_pool):
    sleeper = Job("import time\ndef f():\n    time.sleep(60)\n", tests=["f()"], limits=Limits(wall_s=0.5))
    [result] = sandbox_pool.run([sleeper], budget_s=30)
    assert result.status == "timeout" and result.score == 0.0
    assert "wall-clock" in result.error


WRITES_SHM = _program("""
    import time
    with open("/dev/shm/note", "w") as fh:
        fh.write("the answer is 42")
    def hold():
        time.sleep(3)
        return 1
""")

READS_SHM = _program("""
    import os, time
    def look():
        seen, end = set(), time.monotonic() + 2
        while time.monotonic() < end:
            seen.update(os.listdir("/dev/shm"))
            time.sleep(0.05)
        return sorted(seen)
""")


def test_dev_shm_is_no_channel_between_concurrent_runs(sandbox_pool):
    writer = Job(WRITES_SHM, tests=["assert hold() == 1"], limits=Limits(wall_s=10))
    reader = Job(READS_SHM, tests=["assert look() == []"], limits=Limits(wall_s=10))
    results = sandbox_pool.run([writer, reader], budget_s=60)
    assert [r.score for r in results] == [1.0, 1.0], results


FILLS_SHM = _program("""
    import os, time
    n = 0
    try:
        while True:  # bytes first, then inodes, until the tmpfs refuses
            with open(f"/dev/shm/big{n}", "wb") as fh:
                fh.write(b"x" * (1 << 20))
            n += 1
    except OSError:
        pass
    try:
        while True:
            open(f"/dev/shm/f{n}", "w").close()
            n += 1
    except OSError:
        pass
    def hold():
        time.sleep(3)
        return n
""")

USES_LOCK = _program("""
    import multiprocessing, time
    def locked():
        time.sleep(0.5)  # the filler is done by now
        lock = multiprocessing.Lock()
        with lock:
            return 1
""")


def test_multiprocessing_lock_works_when_a_sibling_filled_its_dev_shm(sandbox_pool):
    filler = Job(FILLS_SHM, tests=["assert hold() > 0"], limits=Limits(wall_s=10))
    honest = Job(USES_LOCK, tests=["assert locked() == 1"], limits=Limits(wall_s=10))
    results = sandbox_pool.run([filler, honest], budget_s=60)
    assert [r.score for r in results] == [1.0, 1.0], results


# Every call returns a namedtuple of a new class with 4000 field names of 1000 characters:
# ~30 MB of class per call in whoever rebuilds it.
POISON = _program("""
    import collections, os
    _fields = [f"f{i}_" + "x" * 1000 for i in range(4000)]
    def poison():
        kind = collections.namedtuple("T" + os.urandom(8).hex(), _fields)  # a shape never seen before
        return kind(*range(4000))
""")

BIG_VALUE = _program("""
    def big():
        return [list(range(1000, 1200)) for _ in range(6000)]  # a 6 MB reply, ~80 MB decoded
""")


def test_namedtuple_flood_cannot_poison_the_grader_for_a_later_program():
    with SandboxPool(workers=1) as pool:  # one slot: every job meets the same grader
        poison = Job(POISON, tests=["for _ in range(12):\n    poison()"], limits=Limits(wall_s=60))
        honest = Job(BIG_VALUE, tests=["assert big()[5999][199] == 1199"], limits=Limits(wall_s=30))
        results = pool.run([poison, poison, poison, poison, honest, honest], budget_s=600)
    assert [r.score for r in results[4:]] == [1.0, 1.0], results[4:]
    assert all(r.score is not None for r in results[:4]), results[:4]


def test_grader_running_out_of_memory_scores_none_not_zero(sandbox_pool):
    # Test code (ours) that cannot fit in the grader: the sample is unjudged, not wrong.
    job = Job("def f():\n    return 1\n", tests=["assert f() == 1\nx = bytearray(8 * 1024 ** 3)"])
    [result] = sandbox_pool.run([job], budget_s=60)
    assert result.status == "sandbox_error" and result.score is None, result
    [again] = sandbox_pool.run([Job("def f():\n    return 1\n", tests=["assert f() == 1"])])
    assert again.score == 1.0


def test_a_program_raising_memory_error_still_scores_zero(sandbox_pool):
    # Its own MemoryError is the program's failure, whatever the grader does with ours.
    program = "def f():\n    raise MemoryError('pretend')\n"
    [result] = sandbox_pool.run([Job(program, tests=["assert f() == 1"])])
    assert result.score == 0.0, result
    hoarder = "def f():\n    return bytearray(4 * 1024 ** 3)\n"
    [result] = sandbox_pool.run([Job(hoarder, tests=["assert len(f()) > 0"])])
    assert result.score == 0.0, result


def test_cpu_clock_counts_the_cgroup_and_reads_only_when_the_limit_is_reachable(tmp_path):
    from grpokit.sandbox.cputime import CpuClock

    usage = tmp_path / "cpuacct.usage"
    usage.write_text("0\n")
    clock = CpuClock(str(usage), limit_s=4.0, start=100.0)
    clock.cpus = 2  # two CPUs spend 4 CPU-seconds in 2 s at the soonest
    clock.next_read = 100.0 + 4.0 / 2
    usage.write_text(str(10 * 10**9))  # spent already, but not yet checkable
    assert not clock.spent(101.0)
    assert clock.spent(102.5)
    usage.write_text(str(3 * 10**9))
    clock = CpuClock(str(usage), limit_s=4.0, start=100.0)
    clock.cpus, clock.next_read = 2, 102.0
    assert not clock.spent(102.0) and clock.seconds_to_next_check(102.0) == pytest.approx(0.5)
    usage.unlink()  # unreadable: only the wall-clock backstop is left
    assert not clock.spent(200.0)


def test_missing_cgroup_hierarchies_are_named_in_the_notes(tmp_path, monkeypatch):
    from grpokit.sandbox import cgroups

    monkeypatch.setattr(cgroups, "V1_ROOT", str(tmp_path))  # no hierarchy mounted there
    groups = cgroups.SlotCgroups(2)
    assert not groups.memory and not groups.cpu and groups.prepare(0, 512) == []
    assert len(groups.notes) == 3 and all("cgroup" in note for note in groups.notes), groups.notes


def test_slot_groups_with_a_cpu_share_where_the_kernel_has_no_per_session_one():
    # The fallback where autogroup is off: runs join a cpu group per slot as well.
    from grpokit.sandbox import cgroups

    groups = cgroups.SlotCgroups(1, cgroups.CONTROLLERS)
    try:
        if not (groups.cpu and groups.cpu_share):
            pytest.skip("no cpu/cpuacct cgroup-v1 hierarchies here: " + "; ".join(groups.notes))
        joined = groups.prepare(0, 256)
        assert groups.paths["cpu"][0] in joined and groups.paths["cpuacct"][0] in joined
        assert groups.cpu_usage_path(0).endswith("cpuacct.usage")
    finally:
        groups.close()
    assert not any(os.path.exists(p) for made in groups.paths.values() for p in made.values())


def test_per_session_sharing_is_not_assumed_inside_a_cpu_cgroup(monkeypatch):
    # Autogroup applies to the root CPU group only: inside a container's cpu group the pool
    # must fall back to a cpu group per slot.
    from grpokit.sandbox import cgroups

    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"cpu": "/docker/abc", "memory": "/docker/abc"})
    assert cgroups.autogroup_enabled() is False
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"": "/system.slice/trainer.service"})  # cgroup v2
    assert cgroups.autogroup_enabled() is False
