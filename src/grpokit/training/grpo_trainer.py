"""GrpokitTrainer: TRL's GRPOTrainer with grpokit's train sampler and progress line.

What grpokit changes in TRL's trainer is said here, in overrides of the hooks TRL and
transformers offer, rather than set on an instance after construction:
- `_get_train_sampler` (the hook GRPOTrainer's own RepeatSampler comes from): the online
  zero-variance filter's sampler when data.drop_zero_variance_after is set
  (grpokit.data.zero_variance), TRL's otherwise;
- transformers' printer and tqdm progress callbacks are left out: grpokit's MetricsCallback
  prints the progress line.
"""
from __future__ import annotations

from transformers.trainer_callback import PrinterCallback, ProgressCallback
from trl import GRPOTrainer

from grpokit.data import zero_variance as zv


class GrpokitTrainer(GRPOTrainer):
    def __init__(self, *args, zero_variance: zv.ZeroVarianceFilter | None = None, **kwargs):
        self.zero_variance = zero_variance  # read by _get_train_sampler, which runs inside train()
        super().__init__(*args, **kwargs)
        for callback in (PrinterCallback, ProgressCallback):
            self.remove_callback(callback)

    def _get_train_sampler(self, dataset=None):
        if self.zero_variance is None:
            return super()._get_train_sampler(dataset)
        return zv.filtered_sampler(self.zero_variance, self, self.train_dataset if dataset is None else dataset)
