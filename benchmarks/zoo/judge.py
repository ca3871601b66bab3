"""A zoo case's judge: the package's local judge server around one training run, killed on cue.

    with serving(2, metrics=run_dir / "metrics.jsonl", log=case_dir / "judge.log") as judge:
        train(config_with(judge.url))
    judge.record()   # url, start seconds, the step after which it was killed and when

The server is grpokit's own (integrations.judge_server, what `grpokit judge serve` runs). It is
killed with SIGKILL, as a crash would end it, once the run's metrics.jsonl has logged the case's
step, and always stopped when the block ends, training failed or not.
"""
from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from grpokit.health.rules import is_train_log
from grpokit.integrations.judge_server import JudgeServer


def last_logged_step(metrics: Path) -> int | None:
    """The highest step metrics.jsonl holds a training log for; a line still being written is skipped."""
    try:
        lines = metrics.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    steps = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int) and is_train_log(record):
            steps.append(record["step"])
    return max(steps, default=None)


class KillAfterStep(threading.Thread):
    """Calls `kill` once metrics.jsonl has logged `step` (polling), then ends; `stop()` ends it early."""

    def __init__(self, metrics: Path, step: int, kill: Callable[[], None], poll_s: float = 0.25):
        super().__init__(name="zoo-judge-killer", daemon=True)
        self.metrics, self.step, self.kill, self.poll_s = Path(metrics), step, kill, poll_s
        self.killed_after: int | None = None   # the step metrics.jsonl had reached when it killed
        self.killed_at: float | None = None    # time.time() of the kill
        self._stopped = threading.Event()

    def run(self) -> None:
        # Polled, not event-driven: the next step's generation takes seconds, so a quarter second
        # is long before that step's reward asks the judge anything.
        while not self._stopped.wait(self.poll_s):
            seen = last_logged_step(self.metrics)
            if seen is not None and seen >= self.step:
                self.kill()
                self.killed_after, self.killed_at = seen, time.time()
                return

    def stop(self) -> None:
        self._stopped.set()
        if self.is_alive():
            self.join()


@dataclass
class LiveJudge:
    server: JudgeServer
    start_s: float
    killer: KillAfterStep | None = None
    started_at: float = field(default_factory=time.time)

    @property
    def url(self) -> str:
        return self.server.url

    def record(self) -> dict[str, Any]:
        killer = self.killer
        return {"url": self.url, "start_s": round(self.start_s, 1), "log": str(self.server.log_path),
                "kill_after_step": killer.step if killer else None,
                "killed_after_step": killer.killed_after if killer else None,
                # seconds after the server first answered
                "killed_at_s": round(killer.killed_at - self.started_at, 1) if killer and killer.killed_at else None}


@contextmanager
def serving(kill_after_step: int | None, metrics: Path, log: Path) -> Iterator[LiveJudge]:
    """A local judge on a free port for the block; SIGKILLed after `kill_after_step` is logged, stopped at the end."""
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)  # the server appends: one run's log, not every rerun's
    server = JudgeServer.for_model(port=0, log_path=log)
    started = time.time()
    live = None
    try:
        server.start()
        live = LiveJudge(server, start_s=time.time() - started)
        if kill_after_step is not None:
            live.killer = KillAfterStep(metrics, kill_after_step, server.kill)
            live.killer.start()
        yield live
    finally:
        if live is not None and live.killer is not None:
            live.killer.stop()
        server.stop()
