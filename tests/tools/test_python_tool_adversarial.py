"""Hostile code sent through the python tool: an error (or harmless output) for the model, no harm done.

The programs are the sandbox's own adversarial set (tests/sandbox/test_adversarial.py):
hangs, resource bombs, escapes, secret reads, network, killing the parent. Through
the tool each must come back as a string or a ToolError (what TRL shows the
model), leave no process or run directory behind, change no file outside, reach
no socket, never show the trainer's secret, and leave the tool working.
"""
from __future__ import annotations

import os
import socket
import textwrap
import time
from pathlib import Path

import pytest

# conftest.py put tests/sandbox on sys.path: the adversarial set and its helpers live there.
from sandbox_helpers import SECRET_NAME, SECRET_VALUE, processes_of, run_dirs  # noqa: E402
from test_adversarial import CASES  # noqa: E402

from grpokit.tools import ToolError, ToolSpec, trainer_kwargs  # noqa: E402
from grpokit.tools.config import EnvironmentConfig  # noqa: E402

# Cases whose top-level code hangs or exhausts a limit: the model must get an error, not output.
# (sys.exit() and os._exit(0) are a clean end, as in any Python session, and come back as output.)
MUST_FAIL = {"loop_top_level", "ignores_sigterm_sigalrm", "sleep_forever",
             "memory_bomb", "memory_bomb_caught", "endless_stdout", "endless_stderr", "huge_file"}


def settled(check, timeout_s: float = 5.0):
    """check() once it is empty, or its last value after timeout_s: a killed run's processes
    are reaped just after its verdict comes back, and on a busy machine that takes a moment."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if not value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


@pytest.fixture(scope="module")
def secret_pool(sandbox_pool):
    if sandbox_pool.level != "full":
        pytest.skip(f"needs full sandbox isolation (root on Linux); this machine gives {sandbox_pool.level!r}")
    return sandbox_pool


@pytest.fixture
def canaries(tmp_path):
    repo_dir = Path(__file__).resolve().parent / f".canary-{os.getpid()}"
    repo_dir.mkdir(exist_ok=True)
    paths = [tmp_path / "canary.txt", repo_dir / "canary.txt"]
    for path in paths:
        path.write_text("canary")
        path.chmod(0o644)
    yield [str(p) for p in paths]
    for path in paths:
        path.unlink(missing_ok=True)
    repo_dir.rmdir()


@pytest.mark.parametrize("name,program", CASES, ids=[c[0] for c in CASES])
def test_hostile_tool_code_returns_an_error_and_harms_nothing(name, program, secret_pool, canaries, monkeypatch):
    monkeypatch.setenv(SECRET_NAME, SECRET_VALUE)  # the trainer's environment holds a secret
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.05)
    code = textwrap.dedent(program).format(
        CANARIES=canaries, SECRET_NAME=SECRET_NAME, SECRET_VALUE="not-the-secret", PORT=listener.getsockname()[1],
        ZYGOTE_PID=secret_pool.zygote_pid, TEST_PID=os.getpid())
    env = trainer_kwargs([ToolSpec("python", {"timeout": 1.0})], EnvironmentConfig())["environment_factory"]()
    env.reset()
    try:
        shown, failed = env.python(code=code), False
    except ToolError as exc:  # TRL turns this into {"error": ...} for the model and counts a failure
        shown, failed = str(exc), True
    assert isinstance(shown, str) and SECRET_VALUE not in shown
    if name in MUST_FAIL:
        assert failed, f"{name} came back as output: {shown[:200]!r}"
    assert settled(lambda: processes_of(secret_pool)) == [], "a process of the program survived"
    assert settled(lambda: run_dirs(secret_pool)) == [], "the run's temp directory was not removed"
    for path in canaries:
        assert Path(path).read_text() == "canary", f"{path} was changed"
    with pytest.raises(socket.timeout):
        listener.accept()
    listener.close()
    env.reset()
    assert env.python(code="print(6 * 7)") == "42"  # the tool (and its pool) still works
