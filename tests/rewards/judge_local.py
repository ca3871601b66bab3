"""One real local judge per test process: llama-cpp-python's server on the bundled GGUF, on 127.0.0.1.

Started on first use (about a second once the model file is cached) and stopped when
the process exits. Tests skip, saying why, only where llama-cpp-python's server is
not installed; `make install` (and so CI) builds it.
"""
from __future__ import annotations

import atexit

import pytest

from grpokit.integrations.judge_server import JudgeServer, server_available

MISSING = ("llama-cpp-python's server is not installed: `make install` builds it "
           "(pip install 'grpokit[judge]'); the judge tests need a real local judge")
_SERVER: list[JudgeServer] = []


def available() -> bool:
    return server_available()


def start_judge(**kwargs) -> JudgeServer:
    """A fresh server on a free port (the caller stops it); skips when the package is missing."""
    if not available():
        pytest.skip(MISSING)
    server = JudgeServer.for_model(port=0, **kwargs)
    atexit.register(server.stop)
    return server.start()


def judge_url() -> str:
    """The shared server's base URL, starting it on first use."""
    if not _SERVER:
        _SERVER.append(start_judge())
    return _SERVER[0].url
