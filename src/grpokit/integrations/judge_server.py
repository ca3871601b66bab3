"""A local OpenAI-compatible judge: `transformers serve` running a model checkpoint, on 127.0.0.1.

    with JudgeServer.for_model("bundled:smollm2-135m-instruct") as server:
        judge = get("llm_judge", base_url=server.url)

`grpokit judge serve` runs the same server in the foreground. It needs only wheels
(`pip install 'grpokit[judge]'`, i.e. transformers[serving]: FastAPI, uvicorn, openai's types);
nothing is compiled. The server is a child process; `stop()` ends it and the model
process it spawns (terminate, then kill) and the context manager always does. It
listens on 127.0.0.1 unless told otherwise: it has no authentication.

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

from grpokit.errors import ConfigError, RunError
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
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="grpokit-judge-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self._workdir = Path(tempfile.mkdtemp(prefix="grpokit-judge-"))
        (self._workdir / ALIAS).symlink_to(Path(self.model).resolve(), target_is_directory=True)
        log = open(self.log_path, "ab")
        try:
            # Its own session, so stop() can end the server and the model process it spawns.
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self._workdir, env=self.environment(),
                                            start_new_session=True)
        finally:
            log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()
                raise RunError(f"the judge server exited with code {code}: {self.log_tail()}")
            if self.ready():
                return self
            time.sleep(0.2)
        self.stop()
        raise RunError(f"the judge server did not answer within {timeout_s:g}s: {self.log_tail()}")

    def ready(self) -> bool:
        return probe(self.url, timeout_s=1.0) is None

    def stop(self, grace_s: float = 10.0) -> None:
        proc, self.process = self.process, None
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
        try:
            return self.log_path.read_text(errors="replace")[-chars:] if self.log_path else ""
        except OSError:
            return ""

    def __enter__(self) -> "JudgeServer":
        return self.start() if self.process is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
