"""out_of_memory: the process's peak against the limit that binds."""
from __future__ import annotations

from grpokit.config.health_params import OutOfMemory
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.checks.run_end import GONE, MEMORY_NEAR, ended_as
from grpokit.health.rule import Ending, Rule, RunFacts
from grpokit.health.signals import Signals


def check_out_of_memory(s: Signals, p: OutOfMemory, run: RunFacts) -> Evidence:
    peak, limit = s.now("memory/peak_gib"), s.now("memory/limit_gib")
    if peak is not None and limit and peak >= p.memory_frac * limit:
        return Evidence(True, peak, p.memory_frac * limit,
                        f"memory peaked at {peak:.2f} GiB of its {limit:.2f} GiB limit ({peak / limit:.0%}): "
                        f"the next larger batch or longer completion may not fit")
    return quiet()


RULES = (
    Rule(
        params=OutOfMemory, severity="critical", title="Out of memory",
        reads=("memory/peak_gib", "memory/limit_gib"), check=check_out_of_memory,
        after_run=ended_as,  # run_status.json: an allocation failed, or the process is gone near the limit
        looks_like=("memory/peak_gib climbs to memory/limit_gib; or the run stopped without finishing and its "
                    "run_status.json says an allocation failed, or the process is gone with memory near the limit."),
        cause=("Training needs more memory than the limit that binds (the machine's RAM, a container's cgroup, "
               "ulimit -v, or the GPU): weights, gradients and optimizer state, the activations of "
               "per_device_train_batch_size x (prompt + completion) tokens and the generation cache add up past it. "
               "The kernel then kills the process without an error message, or an allocation fails."),
        fix=("Use LoRA (model.lora) instead of a full fine-tune, profile: memory (gradient checkpointing), lower "
             "training.per_device_train_batch_size (raise gradient_accumulation_steps to keep the batch) or "
             "max_completion_length, or pick a smaller model; `grpokit doctor CONFIG` prints the planned peak "
             "against the limit. Then `grpokit train CONFIG --resume` continues from the last checkpoint."),
        threshold="memory/peak_gib >= {memory_frac} x memory/limit_gib (the limit that binds: RAM, cgroup or ulimit -v)",
        patience="at once (1 logged step)",
        after_run_threshold=("run_status.json says failed with an allocation failure; or running, with its process "
                             f"on this host gone and {MEMORY_NEAR}"),
        endings=(
            Ending("failed", "run_status.json: failed at {where} with {error:.300}", with_memory=True,
                   title="Out of memory: training stopped when an allocation failed"),
            Ending("killed", GONE, with_memory=True,
                   title="Killed, most likely out of memory: the process is gone without finishing",
                   cause="{cause} A process killed that way writes no error, which is why the run just stops."),
        ),
    ),
)
