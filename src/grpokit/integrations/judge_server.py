"""A local OpenAI-compatible judge: llama-cpp-python's server running a GGUF model, on 127.0.0.1.

    with JudgeServer.for_model("bundled:smollm2-135m-instruct") as server:
        judge = get("llm_judge", base_url=server.url)

`grpokit judge serve` runs the same server in the foreground. The server is a child
process; `stop()` ends it (terminate, then kill) and the context manager always
does. It listens on 127.0.0.1 unless told otherwise: it has no authentication.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grpokit.errors import ConfigError, RunError
from grpokit.rewards.judge.client import probe

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090
DEFAULT_MODEL = "bundled:smollm2-135m-instruct"
ALIAS = "judge"  # the model name requests use (llm_judge's default `model`)


def server_available() -> bool:
    """Whether llama-cpp-python and its server extras are importable (no import is done)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi",
                                                                 "sse_starlette", "pydantic_settings"))


def model_path(name: str) -> Path:
    """The GGUF file to serve: a bundled model's file inside its package, or a path."""
    if name.startswith("bundled:"):
        from grpokit.bundled import bundled_gguf

        return bundled_gguf(name)
    path = Path(name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise ConfigError(f"judge model {name!r}: give a .gguf file or {DEFAULT_MODEL}")
    return path


def free_port(host: str = DEFAULT_HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


@dataclass
class JudgeServer:
    model: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    n_ctx: int = 4096
    threads: int | None = None
    log_path: Path | None = None
    process: subprocess.Popen | None = field(default=None, repr=False)

    @classmethod
    def for_model(cls, name: str = DEFAULT_MODEL, **kwargs) -> "JudgeServer":
        """A server for a model name (port=0 picks a free port)."""
        if kwargs.get("port") == 0:
            kwargs["port"] = free_port(kwargs.get("host", DEFAULT_HOST))
        return cls(model=model_path(name), **kwargs)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        threads = self.threads or max(1, min(4, os.cpu_count() or 1))
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", ALIAS,
                "--host", self.host, "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(threads), "--n_threads_batch", str(threads)]

    def start(self, timeout_s: float = 120.0) -> "JudgeServer":
        """Start the server and wait until it answers /v1/models; raises RunError with its log if it does not."""
        if not server_available():
            from grpokit.optional import _HINTS

            raise ConfigError(f"the local judge needs llama-cpp-python's server: {_HINTS['llama_cpp']}")
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="grpokit-judge-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        log = open(self.log_path, "ab")
        try:
            # Its own session, so stop() can end the server and anything it started.
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RunError(f"the judge server exited with code {self.process.returncode}: {self.log_tail()}")
            if self.ready():
                return self
            time.sleep(0.2)
        self.stop()
        raise RunError(f"the judge server did not answer within {timeout_s:g}s: {self.log_tail()}")

    def ready(self) -> bool:
        return probe(self.url, timeout_s=1.0) is None

    def stop(self, grace_s: float = 10.0) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """End the server at once (SIGKILL), as a crash would: for failure tests."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def log_tail(self, chars: int = 1500) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:] if self.log_path else ""
        except OSError:
            return ""

    def __enter__(self) -> "JudgeServer":
        return self.start() if self.process is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

