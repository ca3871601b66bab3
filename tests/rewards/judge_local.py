"""One real local judge per test run: `transformers serve` on the bundled SmolLM2-135M, on 127.0.0.1.

The shared server starts on first use (the model converted from its GGUF once, then read from
the cache) and stops when the test process exits: every test file that needs a judge
(the judge tests, the reward contract, the spawn test) talks to the same one. Tests
skip, saying why, only where transformers' server packages are not installed;
`make install` (and so CI) installs them, wheels only.
"""
from __future__ import annotations

import atexit

import pytest

from grpokit.integrations.judge_server import MISSING, JudgeServer, server_available

_SERVER: list[JudgeServer] = []


def available() -> bool:
    return server_available()


def start_judge(**kwargs) -> JudgeServer:
    """A fresh server on a free port (the caller stops it); skips when the package is missing."""
    if not available():
        pytest.skip(f"{MISSING}; the judge tests need a real local judge")
    server = JudgeServer.for_model(port=0, **kwargs)
    atexit.register(server.stop)
    return server.start()


def judge_url() -> str:
    """The shared server's base URL, starting it on first use."""
    if not _SERVER:
        _SERVER.append(start_judge())
    return _SERVER[0].url
