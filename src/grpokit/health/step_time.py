"""Seconds per training step, predicted from a short measured probe on this machine.

    rates = measure_rates(model, tokenizer, plan)        # ~10 s on a 2-core CPU with the 135M model
    seconds = predict(rates, plan)                       # {"generation": ..., "training": ..., "total": ...}
    check = check_step_time(seconds, plan)               # a doctor Check: "about 52 s/step, 26 min for 30 steps"

A GRPO step is one generation of the step's completions (one generate call over the whole
generation batch, so its time is the prefill plus the longest completion's tokens times the
time of one decoding step at that batch) and a forward and backward pass over every sequence
(prompt + completion), plus a forward pass without gradients where TRL needs old or
reference log-probabilities. The probe times exactly these on the loaded model, with the
step's batch and prompt length but a few tokens: two short generate calls (their difference
is the per-token time, free of the prefill; the faster of two tries of each) and one forward+backward of one micro-batch cut
to PROBE_TOKENS tokens; then it scales by tokens. Completions are taken at
max_completion_length: generation stops only when the batch's longest completion does, and
one cut completion is enough, so the prediction is the step's cost when any is cut (what a
small model mostly does). The rewards' own time is not in it (a judge or sandbox reward
adds its own; doctor's probe shows them).

Measured against real steps: benchmarks/step_time_estimate.py, results in
benchmarks/results/step_time_estimate.json. The aim is a factor of 1.5. On 2 idle cores
(2026-12-04, load 2.2) the predictions were 0.89 (demo recipe, 3.2 s/step), 0.81 (init math's CPU
defaults, 15.5 s/step) and 0.85 (demo with 64-token completions, 11.3 s/step) of the measured step.
Under a load that changes within seconds a probe can still be far off: it measures the machine as
it is during the probe.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from grpokit.health.doctor_checks import Check

PROBE_TOKENS = 64          # sequence length of the timed forward+backward (scaled up by tokens)
# The decode rate is the difference of two generate calls over DECODE_LONG - DECODE_SHORT tokens:
# with 6 tokens a load spike in either call swung it 2-7x on this shared machine; 16 tokens and the
# faster of two tries of each call keep one spike out of it.
DECODE_SHORT, DECODE_LONG = 2, 18
TRIES = 2


@dataclass
class StepPlan:
    """The shape of one optimizer step."""
    sequences: int               # completions per step (per_device x accumulation: TRL's generation batch)
    micro_batch: int             # per_device_train_batch_size
    prompt_len: int              # tokens in a typical prompt (the probe uses it as is)
    completion_len: int          # max_completion_length
    extra_forwards: int = 0      # no-grad passes per micro-batch: old log-probs, reference model
    max_steps: int | None = None

    @property
    def micro_steps(self) -> int:
        return max(1, -(-self.sequences // max(self.micro_batch, 1)))


@dataclass
class Rates:
    prefill_s: float             # one generate call's fixed part at the step's batch and prompt length
    decode_s_per_token: float    # one decoding step over the whole generation batch
    train_s_per_token: float     # forward+backward, per token of a micro-batch
    forward_s_per_token: float   # forward without gradients, per token
    probe_s: float               # what measuring cost


def plan_for(training: dict[str, Any], prompt_len: int) -> StepPlan:
    """The step's shape from resolved training settings (config.profiles.resolve_training)."""
    per_device = int(training["per_device_train_batch_size"])
    accum = int(training.get("gradient_accumulation_steps") or 1)
    extra = 0
    if float(training.get("beta") or 0.0) > 0:
        extra += 1  # the frozen reference model (with LoRA: the base with the adapter off; same cost)
    if int(training.get("num_iterations") or 1) > 1:
        extra += 1  # old log-probabilities for the clipped ratio
    return StepPlan(sequences=per_device * accum, micro_batch=per_device, prompt_len=max(1, prompt_len),
                    completion_len=int(training["max_completion_length"]), extra_forwards=extra,
                    max_steps=training.get("max_steps"))


def _token_ids(tokenizer: Any, batch: int, length: int):
    import torch

    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    vocab = int(getattr(tokenizer, "vocab_size", 0) or len(tokenizer))
    low = 3 + len(special)
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(low, max(low + 1, vocab - 1), (batch, length), generator=generator)
    return ids


def measure_rates(model: Any, tokenizer: Any, plan: StepPlan, *, trainable: str = "lora") -> Rates:
    """Time the step's parts on `model` (as training loads it: its dtype, and with LoRA adapters
    where the run has them). `trainable`: "lora" (adapter weights only: the backward computes the
    activations' gradients, not the base weights') or "full"."""
    import torch

    started = time.perf_counter()
    device = next(model.parameters()).device
    was_training = model.training
    grads = {p: p.requires_grad for p in model.parameters()}
    try:
        model.eval()
        ids = _token_ids(tokenizer, plan.sequences, plan.prompt_len).to(device)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

        def generate(new: int) -> float:
            t0 = time.perf_counter()
            with torch.no_grad():
                model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=True, top_k=0,
                               max_new_tokens=new, min_new_tokens=new, pad_token_id=pad)
            return time.perf_counter() - t0

        generate(1)  # first call pays for lazy initialisation
        short = min(generate(DECODE_SHORT) for _ in range(TRIES))
        long = min(generate(DECODE_LONG) for _ in range(TRIES))
        per_token = max((long - short) / (DECODE_LONG - DECODE_SHORT), 1e-6)
        prefill = max(short - DECODE_SHORT * per_token, 0.0)

        length = min(PROBE_TOKENS, plan.prompt_len + plan.completion_len)
        batch = _token_ids(tokenizer, plan.micro_batch, length).to(device)
        model.train()
        for p in model.parameters():
            p.requires_grad_(trainable == "full" or p.requires_grad)
        embeddings = model.get_input_embeddings()

        def forward_backward() -> float:
            t0 = time.perf_counter()
            hidden = embeddings(batch).detach().requires_grad_(trainable != "full")
            logits = model(inputs_embeds=hidden).logits
            torch.log_softmax(logits.float(), dim=-1)[..., 0].mean().backward()
            model.zero_grad(set_to_none=True)
            return time.perf_counter() - t0

        def forward() -> float:
            t0 = time.perf_counter()
            with torch.no_grad():
                torch.log_softmax(model(input_ids=batch).logits.float(), dim=-1)
            return time.perf_counter() - t0

        forward_backward()  # warm-up: the first backward builds autograd's buffers
        train = min(forward_backward() for _ in range(TRIES))
        fwd = min(forward() for _ in range(TRIES))
        tokens = plan.micro_batch * length
        return Rates(prefill_s=prefill, decode_s_per_token=per_token, train_s_per_token=train / tokens,
                     forward_s_per_token=fwd / tokens, probe_s=time.perf_counter() - started)
    finally:
        for p, flag in grads.items():
            p.requires_grad_(flag)
        model.zero_grad(set_to_none=True)
        model.train(was_training)


def predict(rates: Rates, plan: StepPlan) -> dict[str, float]:
    """Seconds for one step, by part."""
    tokens = plan.sequences * (plan.prompt_len + plan.completion_len)
    generation = rates.prefill_s + plan.completion_len * rates.decode_s_per_token
    training = tokens * (rates.train_s_per_token + plan.extra_forwards * rates.forward_s_per_token)
    return {"generation": generation, "training": training, "total": generation + training}


def describe(seconds: dict[str, float], plan: StepPlan) -> str:
    total = seconds["total"]
    text = (f"about {total:.0f} s per step here ({seconds['generation']:.0f} s generating "
            f"{plan.sequences} x {plan.completion_len} tokens, {seconds['training']:.0f} s training), "
            "plus the rewards' own time")
    if plan.max_steps:
        text += f"; {plan.max_steps} steps: {_duration(total * plan.max_steps)}"
    return text


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


LONG_RUN_S = 3600.0


def check_step_time(seconds: dict[str, float], plan: StepPlan) -> Check:
    detail = describe(seconds, plan)
    run = seconds["total"] * (plan.max_steps or 0)
    if run > LONG_RUN_S:
        return Check("time", "step time", "warn", detail,
                     "for a first run, lower training.max_steps, training.max_completion_length or "
                     "training.num_generations (each step's time scales with completions x tokens)")
    return Check("time", "step time", "info", detail)


def step_seconds(cfg: Any, model: Any, tokenizer: Any, prompt_len: int) -> tuple[dict[str, float], StepPlan, Rates]:
    """Predict `cfg`'s first stage's step on a loaded model (as doctor loads it: no adapter). With LoRA
    an adapter is added for the probe and removed after, so the probe pays what training pays."""
    from grpokit.config.profiles import resolve_training

    training = resolve_training(cfg, cfg.stages[0] if cfg.stages else None)
    plan = plan_for(training, prompt_len)
    if cfg.model.lora is None:
        rates = measure_rates(model, tokenizer, plan, trainable="full")
        return predict(rates, plan), plan, rates
    from peft import get_peft_model

    from grpokit.models.checkpointing_names import quiet_model_alias
    from grpokit.models.loading import peft_config

    with quiet_model_alias():  # peft reads the deprecated is_gradient_checkpointing
        adapted = get_peft_model(model, peft_config(cfg.model.lora))
    try:
        rates = measure_rates(adapted, tokenizer, plan, trainable="lora")
    finally:
        adapted.unload()  # the base model back, as the caller loaded it
    return predict(rates, plan), plan, rates
