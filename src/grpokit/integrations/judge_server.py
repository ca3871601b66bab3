"""A local OpenAI-compatible judge: `transformers serve` running a model checkpoint, on 127.0.0.1.

    with JudgeServer.for_model("bundled:smollm2-135m-instruct") as server:
        judge = get("llm_judge", base_url=server.url)

`grpokit judge serve` runs the same server in the foreground (`serve_foreground`). It needs only
wheels (`pip install 'grpokit[judge]'`, i.e. transformers[serving]: FastAPI, uvicorn, openai's
types); nothing is compiled. The server is a child process in its own process group; `stop()` ends
it and the model process it spawns (terminate, then kill) and the context manager always does. It
dies with the process that started it, however that one dies (judge_process.py), and `start()`
refuses a port something else listens on, before the server starts, naming the holder: an old
server answering there would otherwise pass for the new one. It listens on 127.0.0.1 unless told
otherwise: it has no authentication.

`transformers serve` ignores response_format, so replies are not held to a JSON schema
as llama.cpp's grammar held them; llm_judge's worked example turn and its lenient
parsing (rewards/judge/rubrics.py) carry the reply's shape instead.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grpokit.errors import ConfigError, RunError
from grpokit.integrations.judge_process import (Stopped, group_listens, launch_prefix, port_holder, port_in_use,
                                                stop_on_signals, tail_lines)
from grpokit.rewards.judge.client import probe

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090
DEFAULT_MODEL = "bundled:smollm2-135m-instruct"
ALIAS = "judge"  # the model name requests use (llm_judge's default `model`)
# What `transformers serve` imports (transformers.utils.is_serve_available checks the same four).
_SERVING_MODULES = ("fastapi", "uvicorn", "openai", "pydantic")
MISSING = "the local judge needs transformers' server: pip install 'grpokit[judge]'  (transformers[serving], wheels only)"


def server_available() -> bool:
    """Whether `transformers serve` can start: its server packages are importable (nothing is imported)."""
    return all(importlib.util.find_spec(m) is not None for m in _SERVING_MODULES)


def model_path(name: str) -> Path:
    """The checkpoint to serve: the bundled model's (converted from its GGUF once, then cached) or a folder."""
    if name.startswith("bundled:"):
        from grpokit.bundled import ensure_bundled

        return ensure_bundled(name)
    path = Path(name).expanduser()
    if not (path / "config.json").is_file():
        raise ConfigError(f"judge model {name!r}: give a folder holding a transformers checkpoint (its config.json, "
                          f"weights and tokenizer), or {DEFAULT_MODEL}")
    return path


def free_port(host: str = DEFAULT_HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def default_threads() -> int:
    # Half the cores, at most 4: the judge shares the machine with training. Measured on a loaded 2-core
    # machine, 2 torch threads spent 10x the CPU of 1 thread per reply (threads spinning at barriers).
    return max(1, min(4, (os.cpu_count() or 2) // 2))


@dataclass
class JudgeServer:
    model: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    max_len: int | None = 4096  # prompt and reply, in tokens; a longer request gets an error, so None, never 0
    threads: int | None = None
    device: str = "auto"
    continuous_batching: bool = False
    log_path: Path | None = None
    process: subprocess.Popen | None = field(default=None, repr=False)
    exit_code: int | None = field(default=None, repr=False)  # the server's own, where it ended before stop()
    _workdir: Path | None = field(default=None, repr=False)

    @classmethod
    def for_model(cls, name: str = DEFAULT_MODEL, **kwargs) -> "JudgeServer":
        """A server for a model name (port=0 picks a free port)."""
        if not server_available():
            raise ConfigError(MISSING)
        if kwargs.get("port") == 0:
            kwargs["port"] = free_port(kwargs.get("host", DEFAULT_HOST))
        return cls(model=model_path(name), **kwargs)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        # The model is named ALIAS: a link of that name in the server's working directory points at the
        # checkpoint, so requests say model="judge" whatever the checkpoint's path.
        cmd = [sys.executable, "-m", "transformers.cli.transformers", "serve", ALIAS, "--host", self.host,
               "--port", str(self.port), "--device", self.device, "--log-level", "warning"]
        if self.max_len:
            cmd += ["--max-model-len", str(self.max_len)]
        if self.continuous_batching:
            cmd.append("--continuous-batching")
        return cmd

    def environment(self) -> dict[str, str]:
        threads = str(self.threads or default_threads())
        # A local checkpoint: nothing to fetch, so never wait on the network (no update check either).
        return {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "HF_HUB_OFFLINE": "1",
                "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false"}

    def start(self, timeout_s: float = 300.0) -> "JudgeServer":
        """Start the server and wait until it answers /v1/models; raises RunError with its log if it does not."""
        if not server_available():
            raise ConfigError(MISSING)
        if port_in_use(self.host, self.port):
            raise RunError(f"port {self.port} on {self.host} is in use{port_holder(self.port)}: stop what holds it "
                           f"(an earlier judge server still running?) or choose another port (--port); its "
                           f"llm_judge rewards then need params.base_url: http://{self.host}:PORT/v1")
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="grpokit-judge-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self._workdir = Path(tempfile.mkdtemp(prefix="grpokit-judge-"))
        (self._workdir / ALIAS).symlink_to(Path(self.model).resolve(), target_is_directory=True)
        log = open(self.log_path, "ab")
        try:
            # Its own session, so stop() can end the server and the model process it spawns.
            # Through the launcher: the server gets SIGTERM should this process die without stop().
            self.process = subprocess.Popen(launch_prefix() + self.command(), stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self._workdir, env=self.environment(),
                                            start_new_session=True)
        finally:
            log.close()
        try:
            return self._wait_ready(timeout_s)
        except BaseException:  # a failure, Ctrl-C or a signal while the model loads: no server left behind
            self.stop()
            raise

    def _wait_ready(self, timeout_s: float) -> "JudgeServer":
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RunError(f"the judge server exited with code {self.process.returncode}: {self.log_tail()}")
            if self.ready():
                return self
            time.sleep(0.2)
        raise RunError(f"the judge server did not answer within {timeout_s:g}s: {self.log_tail()}")

    def ready(self) -> bool:
        """Our server answers: the endpoint answers, and (where /proc tells) from a process of our server's group,
        not another that took the port."""
        if self.process is None or self.process.poll() is not None or probe(self.url, timeout_s=1.0) is not None:
            return False
        return group_listens(self.port, self.process.pid) is not False

    def stop(self, grace_s: float = 10.0) -> None:
        proc, self.process = self.process, None
        if proc is not None:
            self.exit_code = proc.poll()
        try:
            if proc is not None and proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(grace_s)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                except ProcessLookupError:
                    pass
            if proc is not None:
                _kill_group(proc.pid)  # the model process, should it outlive the server
        finally:
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None

    def kill(self) -> None:
        """End the server at once (SIGKILL), as a crash would: for failure tests."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def log_tail(self, chars: int = 1500) -> str:
        """The end of the server's log, in whole lines."""
        try:
            return tail_lines(self.log_path.read_text(errors="replace"), chars) if self.log_path else ""
        except OSError:
            return ""

    def __enter__(self) -> "JudgeServer":
        return self.start() if self.process is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_foreground(server: JudgeServer, echo: Callable[..., None], timeout_s: float = 300.0) -> int:
    """`grpokit judge serve`: start the server, say where it is, wait until Ctrl-C, SIGTERM or SIGHUP (0) or
    until the server stops by itself (1, with its log's last lines). It is always ended on the way out."""
    with stop_on_signals():
        try:
            with server.start(timeout_s):
                echo(f"judge ready at {server.url} (model name {ALIAS!r}); log: {server.log_path}\n"
                     f"use it: rewards: [{{name: llm_judge, params: {{base_url: {server.url}}}}}]  (Ctrl-C stops it)")
                while server.process is not None and server.process.poll() is None:
                    time.sleep(0.5)
        except (KeyboardInterrupt, Stopped):
            return 0
    echo(f"the judge server stopped by itself (exit code {server.exit_code}); the end of its log "
         f"({server.log_path}):\n{server.log_tail(1500)}", err=True)
    return 1


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
