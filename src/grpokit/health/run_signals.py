"""The finished run as the after-run rules read it: its training logs, its config, and how it ended
(run_status.json), each read at most once."""
from __future__ import annotations

from functools import cached_property
from typing import Any

from grpokit.health.run_status import post_mortem


class RunSignals:
    def __init__(self, run: Any):
        self.run = run  # a diagnose.RunData

    @cached_property
    def train(self) -> list[dict[str, Any]]:
        return self.run.train_metrics

    @property
    def config(self) -> dict[str, Any]:
        return self.run.config

    @cached_property
    def ending(self) -> dict[str, Any] | None:
        """What run_status.json says happened to a run that did not finish (run_status.post_mortem), or None."""
        return post_mortem(self.run.run_dir, finished=self.run.finished)
