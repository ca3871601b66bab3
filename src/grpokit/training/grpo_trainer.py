"""GrpokitTrainer: TRL's GRPOTrainer with grpokit's train sampler and progress line.

What grpokit changes in TRL's trainer is said here, in overrides of the hooks TRL and
transformers offer, rather than set on an instance after construction. The private TRL hooks
among them, with the parameters and attributes they rely on, are named in
grpokit.training.trl_hooks (whose test fails on a TRL that lacks one):
- `_get_train_sampler` (the hook GRPOTrainer's own RepeatSampler comes from): the online
  zero-variance filter's sampler when data.drop_zero_variance_after is set
  (grpokit.data.zero_variance), TRL's otherwise;
- transformers' printer and tqdm progress callbacks are left out: grpokit's MetricsCallback
  prints the progress line;
- `_generate`, `_calculate_rewards` and `_generate_and_score_completions` tell `progress`
  (grpokit.training.progress.StepProgress) which phase a step is in, so a long step prints
  what it is doing every few seconds instead of nothing for minutes.
"""
from __future__ import annotations

from transformers.trainer_callback import PrinterCallback, ProgressCallback
from trl import GRPOTrainer

from grpokit.data import zero_variance as zv
from grpokit.training.progress import StepProgress


class GrpokitTrainer(GRPOTrainer):
    def __init__(self, *args, zero_variance: zv.ZeroVarianceFilter | None = None,
                 progress: StepProgress | None = None, **kwargs):
        self.zero_variance = zero_variance  # read by _get_train_sampler, which runs inside train()
        self.progress = progress
        super().__init__(*args, **kwargs)
        for callback in (PrinterCallback, ProgressCallback):
            self.remove_callback(callback)

    def _get_train_sampler(self, dataset=None):
        if self.zero_variance is None:
            return super()._get_train_sampler(dataset)
        return zv.filtered_sampler(self.zero_variance, self, self.train_dataset if dataset is None else dataset)

    def _phase(self, text: str) -> None:
        if self.progress is not None:
            self.progress.phase(text)

    def _generate(self, prompts: list):
        self._phase(f"generating {len(prompts)} completions")
        out = super()._generate(prompts)
        self._phase("log-probabilities of the completions")
        return out

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        self._phase(f"scoring {len(completions)} completions with the rewards")
        out = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._phase("advantages")
        return out

    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        self._phase("training (forward and backward passes)")
        return out
