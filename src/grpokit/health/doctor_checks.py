"""The doctor's checks as plain functions of plain values, so each is testable
without a config file, a data set or a GPU. doctor.py gathers the values and
calls these.

Every check returns `Check`s with a status: ok | info | warn | fail (fail makes
`grpokit doctor` exit 1) and, when not ok, a fix that names the setting to change.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

GIB = 1024 ** 3


@dataclass
class Check:
    area: str        # environment | config | memory | lengths | probe | ...
    name: str
    status: str      # ok | info | warn | fail
    detail: str
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- environment

OPTIONAL = ("bitsandbytes", "vllm", "unsloth", "deepspeed")


def package_version(module: str, dist: str | None = None) -> str | None:
    """Installed version without importing the module (vLLM/Unsloth imports take seconds or need a GPU)."""
    if importlib.util.find_spec(module) is None:
        return None
    try:
        return importlib.metadata.version(dist or module)
    except importlib.metadata.PackageNotFoundError:
        return "unknown version"


def needs_for(profile: str | None, training: dict[str, Any], model: dict[str, Any]) -> dict[str, str]:
    """What a config needs from the machine: {requirement: why}. Requirements: cuda and OPTIONAL names."""
    needs: dict[str, str] = {}
    profile = profile or "none"
    if profile == "vllm" or training.get("use_vllm"):
        needs["vllm"] = "profile vllm / training.use_vllm generates with vLLM"
        needs["cuda"] = "vLLM runs on a CUDA GPU"
    if profile == "unsloth" or model.get("backend") == "unsloth":
        needs["unsloth"] = "profile unsloth / model.backend unsloth"
        needs["cuda"] = "Unsloth runs on a CUDA GPU"
    optim = str(training.get("optim") or "")
    if "8bit" in optim or "bnb" in optim:
        needs["bitsandbytes"] = f"training.optim {optim} is a bitsandbytes optimizer"
        needs["cuda"] = "8-bit optimizers run on a CUDA GPU"
    if model.get("load_in_4bit"):
        needs["bitsandbytes"] = "model.load_in_4bit quantizes with bitsandbytes"
        needs["cuda"] = "4-bit weights need a CUDA GPU"
    if training.get("fp16"):
        needs["cuda"] = "training.fp16 mixed precision needs a CUDA GPU"
    if training.get("deepspeed"):
        needs["deepspeed"] = "training.deepspeed is set"
    return needs


def check_environment(needs: dict[str, str], *, versions: dict[str, str | None] | None = None,
                      cuda: bool | None = None, gpu: str = "", trl_problems: list[str] | None = None) -> list[Check]:
    """Each component: present or not, and whether the config needs it. `versions`/`cuda` are for tests.
    `trl_problems`: what the installed TRL lacks of the private hooks grpokit overrides
    (grpokit.training.trl_hooks.missing(), which the doctor command reads: health comes before training);
    None: not checked."""
    if versions is None:
        versions = {"torch": package_version("torch"), "transformers": package_version("transformers"),
                    "trl": package_version("trl"), "peft": package_version("peft")}
        versions.update({m: package_version(m) for m in OPTIONAL})
    if cuda is None:
        from grpokit.optional import cuda_available

        cuda = cuda_available()
        if cuda:
            import torch

            props = torch.cuda.get_device_properties(0)
            gpu = f"{torch.cuda.device_count()} x {props.name}, {props.total_memory / GIB:.0f} GiB"
    from grpokit.optional import _HINTS

    checks = []
    for core in ("torch", "transformers", "trl", "peft"):
        v = versions.get(core)
        checks.append(Check("environment", core, "ok" if v else "fail", v or "not installed",
                            "" if v else f"pip install {core}"))
    if versions.get("trl") and trl_problems is not None:
        checks.append(check_trl_hooks(trl_problems))
    need = needs.get("cuda")
    if cuda:
        checks.append(Check("environment", "CUDA", "ok", gpu or "available"))
    else:
        checks.append(Check("environment", "CUDA", "fail" if need else "info",
                            f"no CUDA GPU visible{': ' + need if need else ' (training runs on the CPU: use profile: cpu)'}",
                            "run on a machine with a CUDA GPU, or switch to profile: cpu" if need else ""))
        if versions.get("torch"):
            checks.append(check_cpu_load())
    for module in OPTIONAL:
        v = versions.get(module)
        why = needs.get(module)
        if v:
            checks.append(Check("environment", module, "ok", f"{v}{' (needed: ' + why + ')' if why else ''}"))
        elif why:
            checks.append(Check("environment", module, "fail", f"not installed, but needed: {why}",
                                _HINTS.get(module, f"pip install {module}")))
        else:
            checks.append(Check("environment", module, "info", "not installed (not needed by this config)"))
    return checks


def check_trl_hooks(problems: list[str]) -> Check:
    """Whether the installed TRL still has the private GRPOTrainer hooks grpokit overrides
    (grpokit.training.trl_hooks): a renamed hook fails silently mid-run, so say so before training."""
    if not problems:
        return Check("environment", "TRL hooks", "ok", "GRPOTrainer has every hook grpokit overrides")
    return Check("environment", "TRL hooks", "fail", "; ".join(problems),
                 "install the TRL release pyproject.toml pins (pip install 'trl>=1.16,<1.17')")


def check_cpu_load(load: float | None = None, cores: int | None = None, threads: int | None = None) -> Check:
    """Whether other jobs already hold the cores a CPU run's torch threads will want.

    torch's OpenMP threads spin-wait for each other; when another process holds
    one of their cores, every matmul waits for a descheduled thread. Measured on a
    2-core machine with a second busy process: an (8x576)@(576x1536) matmul took
    3.3 ms on one thread and 22 ms on two. The arguments are for tests; None
    means read this machine.
    """
    import os

    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            return Check("environment", "CPU load", "info", "load average unavailable")
    cores = cores or os.cpu_count() or 1
    if threads is None:
        import torch

        threads = torch.get_num_threads()
    free = max(1, int(cores - load + 0.5))
    detail = f"load {load:.1f} on {cores} cores; torch uses {threads} threads"
    if load >= 1.0 and threads > free:
        return Check("environment", "CPU load", "warn",
                     detail + ": its threads will wait on cores other jobs hold (steps can run several times slower)",
                     f"stop the other jobs, or give training the free cores: OMP_NUM_THREADS={free} grpokit train ...")
    return Check("environment", "CPU load", "ok", detail)


# --------------------------------------------------------------------------- memory

# RSS of a process that has imported torch, transformers, TRL and PEFT (measured: 0.45 GB).
CPU_RUNTIME_BYTES = 0.45 * GIB

OPTIMIZER_BYTES = {  # optimizer state per trainable parameter
    "adamw": 8.0,        # two fp32 moments
    "8bit": 2.0,         # two 8-bit moments
    "adafactor": 1.0,    # factored second moment: well under a byte per parameter in practice; rounded up
    "sgd": 4.0,
}


def optimizer_bytes(optim: str | None) -> float:
    optim = (optim or "adamw_torch").lower()
    if "8bit" in optim or "bnb" in optim:
        return OPTIMIZER_BYTES["8bit"]
    if "adafactor" in optim:
        return OPTIMIZER_BYTES["adafactor"]
    if "sgd" in optim:
        return OPTIMIZER_BYTES["sgd"]
    return OPTIMIZER_BYTES["adamw"]


def _lora_targets(linears: Iterable[tuple[str, int, int]], target_modules: str | Sequence[str]):
    for name, n_in, n_out in linears:
        leaf = name.rsplit(".", 1)[-1]
        if target_modules == "all-linear":
            hit = leaf not in ("lm_head", "embed_out", "output")  # PEFT leaves the output layer alone
        elif isinstance(target_modules, str):
            hit = leaf == target_modules
        else:
            hit = leaf in target_modules or any(name.endswith(t) for t in target_modules)
        if hit:
            yield n_in, n_out


def lora_params(linears: Iterable[tuple[str, int, int]], r: int, target_modules: str | Sequence[str]) -> int:
    """Trainable LoRA parameters: r * (in + out) for each targeted linear layer (name, in, out)."""
    return sum(r * (n_in + n_out) for n_in, n_out in _lora_targets(linears, target_modules))


@dataclass
class ModelShape:
    n_params: int
    hidden: int
    layers: int
    vocab: int
    kv_dim: int            # key/value width per layer (heads_kv * head_dim)
    linears: list[tuple[str, int, int]]
    context: int | None = None
    heads: int = 1         # attention heads per layer


def shape_of(model: Any) -> ModelShape:
    """A loaded (or meta-device) transformers model's size and shape."""
    cfg = getattr(model, "config", None)
    hidden = int(getattr(cfg, "hidden_size", 0) or 0)
    heads = int(getattr(cfg, "num_attention_heads", 1) or 1)
    kv_heads = int(getattr(cfg, "num_key_value_heads", heads) or heads)
    head_dim = int(getattr(cfg, "head_dim", 0) or (hidden // heads if heads else 0))
    linears = [(n, m.in_features, m.out_features) for n, m in model.named_modules()
               if hasattr(m, "in_features") and hasattr(m, "out_features") and hasattr(m, "weight")]
    return ModelShape(
        n_params=sum(p.numel() for p in model.parameters()),
        hidden=hidden,
        layers=int(getattr(cfg, "num_hidden_layers", 0) or 0),
        vocab=int(getattr(cfg, "vocab_size", 0) or 0),
        kv_dim=kv_heads * head_dim,
        linears=linears,
        context=getattr(cfg, "max_position_embeddings", None),
        heads=heads,
    )


# Measured (benchmarks/memory_estimate.py: SmolLM2-135M, float32, CPU, TRL 1.16): what the
# forward keeps for backward per token and layer, in units of the hidden size, and how far
# the backward pass then rises above it.
CPU_PACKED_COPIES = 2.0
SAVED_PER_TOKEN = 29.0        # without checkpointing
SAVED_PER_TOKEN_CKPT = 24.0   # with it, backward included: checkpointing only saved ~40% here
BACKWARD_RISE = 1.4


def estimate_memory(shape: ModelShape, *, weight_bytes: float, lora_r: int | None,
                    lora_targets: str | Sequence[str] = "all-linear", optim: str | None = None,
                    beta: float = 0.0, per_device_batch: int = 8, generation_batch: int = 8,
                    prompt_len: int = 256, completion_len: int = 256, gradient_checkpointing: bool = False,
                    act_bytes: float = 2.0, runtime: float = 0.0, lora_dropout: float = 0.0,
                    attention_matrices: bool = False, fused_lm_head: bool = True,
                    device_allocator: bool = False, autocast: bool = False) -> dict[str, float]:
    """Peak memory by part, in bytes: a planning estimate calibrated on measured runs
    (benchmarks/results/memory_estimate.json), not a measurement.

    attention_matrices: the attention kernel materialises (heads x seq x seq) probabilities, as
    PyTorch's CPU attention does with a padding mask; GPU flash / memory-efficient kernels do not.
    fused_lm_head: TRL scores completions through a chunked LM head (TRL >= 1.16); older
    versions hold the full fp32 logits of the micro-batch.
    autocast: bf16/fp16 autocast is on (adapter inputs are then kept in 16 bits).
    device_allocator: the peak is a GPU's allocated memory (torch.cuda.max_memory_allocated), not a
    CPU process's resident set: freed buffers do not count, which matters under checkpointing.
    """
    seq = prompt_len + completion_len
    full = not lora_r
    trainable = shape.n_params if full else lora_params(shape.linears, lora_r, lora_targets)
    tokens = per_device_batch * seq * max(shape.layers, 1)
    if gradient_checkpointing and device_allocator:
        # What a caching allocator counts as live: each layer's input, plus one layer's full set
        # while the backward recomputes it. (Checked, not fitted, on an H200:
        # benchmarks/results/memory_estimate.json, "gpu_held_out".)
        activations = (tokens + per_device_batch * seq * SAVED_PER_TOKEN) * shape.hidden * act_bytes
        attention = 0.0
    elif gradient_checkpointing:
        # A CPU process's resident peak keeps far more: freed recomputation buffers stay in glibc's arenas.
        activations = tokens * shape.hidden * SAVED_PER_TOKEN_CKPT * act_bytes
        attention = 0.0  # one layer's worth at a time
    else:
        activations = tokens * shape.hidden * SAVED_PER_TOKEN * act_bytes * BACKWARD_RISE
        attention = (per_device_batch * shape.layers * shape.heads * seq * seq * 4.0 * BACKWARD_RISE
                     if attention_matrices else 0.0)
    if lora_r and weight_bytes < 4 and not autocast and not gradient_checkpointing:
        # 16-bit base weights with float32 adapters and no autocast (the cpu profile on a bf16 CPU):
        # each adapted layer casts its input to float32 for the adapter, and autograd keeps that copy.
        widths = sum(n_in for n_in, _ in _lora_targets(shape.linears, lora_targets)) / max(shape.layers, 1)
        activations += tokens * widths * 4.0 * BACKWARD_RISE
    if lora_r and lora_dropout > 0 and not gradient_checkpointing:
        # Each adapted layer keeps its own dropped-out copy of its input, and the mask.
        widths = sum(n_in for n_in, _ in _lora_targets(shape.linears, lora_targets)) / max(shape.layers, 1)
        activations += tokens * widths * (act_bytes + 1) * BACKWARD_RISE
    parts = {
        "weights": shape.n_params * weight_bytes,
        # Without LoRA a separate frozen reference copy is loaded when beta > 0;
        # with LoRA the reference is the base with the adapter switched off.
        "reference model": shape.n_params * weight_bytes if (beta and full) else 0.0,
        "gradients": trainable * (4.0 if not full else weight_bytes),
        "optimizer": trainable * optimizer_bytes(optim) + (trainable * 4.0 if full and weight_bytes < 4 else 0.0),
        "activations": activations,
        "attention matrices": attention,
        "logits": 0.0 if fused_lm_head else per_device_batch * completion_len * shape.vocab * 4.0 * 3,
        "generation KV cache": generation_batch * seq * shape.layers * 2 * shape.kv_dim * act_bytes,
        # Python, torch, transformers and TRL themselves: resident on the host, not on a GPU.
        "runtime": runtime,
        # 16-bit weights on a CPU: ~2 more copies of the weights resident while training. Fitted on one
        # run (the zoo's OOM case, 0.74 -> 0.95) and checked on init's config (1.09): memory_estimate.json.
        # Attributed to oneDNN's reordered (packed) bf16 weights for the forward and backward matmuls,
        # which it caches; not traced allocation by allocation.
        "16-bit CPU matmul copies": (CPU_PACKED_COPIES * shape.n_params * weight_bytes
                                     if runtime and weight_bytes < 4 else 0.0),
    }
    parts["total"] = sum(parts.values())
    parts["trainable_params"] = float(trainable)
    return parts


def check_memory(parts: dict[str, float], available: float | None, where: str) -> list[Check]:
    total = parts["total"]
    breakdown = ", ".join(f"{k} {v / GIB:.2f}" for k, v in parts.items() if k not in ("total", "trainable_params") and v)
    detail = (f"about {total / GIB:.1f} GiB peak ({breakdown} GiB; "
              f"{parts['trainable_params'] / 1e6:.2f}M trainable parameters)")
    if not available:
        return [Check("memory", "estimate", "info", detail)]
    share = total / available
    detail += f" vs {available / GIB:.1f} GiB available on the {where}"
    if share > 1.0:
        return [Check("memory", "estimate", "fail", detail,
                      "use LoRA (model.lora), profile: memory (gradient checkpointing, 8-bit optimizer), lower "
                      "training.per_device_train_batch_size or max_completion_length, or a smaller model")]
    if share > 0.8:
        return [Check("memory", "estimate", "warn", detail,
                      "close to the limit: enable gradient checkpointing (profile: memory) or lower "
                      "training.per_device_train_batch_size")]
    return [Check("memory", "estimate", "ok", detail)]


def available_memory(cuda: bool) -> tuple[float | None, str]:
    """(bytes, where): the GPU's total memory; on the CPU the tightest of the host's MemAvailable,
    this process's memory cgroup and its address-space cap (ulimit -v), which is the one a run dies at."""
    if cuda:
        import torch

        return float(torch.cuda.get_device_properties(0).total_memory), "GPU"
    from grpokit.health.memory import meminfo, memory_limit, not_resident

    bound = memory_limit()
    if bound is not None and bound.kind == "address space":
        # Mapped library code and reserved arenas count against ulimit -v but not in the estimate.
        return max(0.0, bound.limit - not_resident()), f"CPU under {bound.how}, after {not_resident() / GIB:.1f} GiB " \
                                                        "of mapped libraries"
    if bound is not None and bound.kind == "cgroup":
        return bound.limit, f"CPU under {bound.how}"
    return meminfo("MemAvailable"), "CPU"


# --------------------------------------------------------------------------- token lengths


def percentile(values: Sequence[int], q: float) -> int:
    ordered = sorted(values)
    if not ordered:
        return 0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def check_lengths(prompt_lengths: Sequence[int], answer_lengths: Sequence[int], max_completion_length: int,
                  context_length: int | None = None, max_prompt_length: int | None = None) -> list[Check]:
    """Prompt and gold-answer token lengths against the configured limits."""
    checks = []
    if prompt_lengths:
        p50, p95, top = percentile(prompt_lengths, 0.5), percentile(prompt_lengths, 0.95), max(prompt_lengths)
        detail = f"prompts: median {p50}, p95 {p95}, max {top} tokens ({len(prompt_lengths)} rows)"
        status, fix = "ok", ""
        if max_prompt_length:
            over = sum(1 for n in prompt_lengths if n > max_prompt_length) / len(prompt_lengths)
            if over:
                status = "fail" if over > 0.5 else "warn"
                detail += f"; {over:.0%} longer than max_prompt_length={max_prompt_length}"
                fix = f"raise training.max_prompt_length to at least {p95} or shorten data.system_prompt"
        if context_length and top + max_completion_length > context_length:
            over = sum(1 for n in prompt_lengths if n + max_completion_length > context_length) / len(prompt_lengths)
            status = "fail" if over > 0.5 else "warn"
            detail += (f"; {over:.0%} of prompts + max_completion_length={max_completion_length} exceed the "
                       f"model's context of {context_length}")
            fix = "lower training.max_completion_length, shorten the prompts, or use a longer-context model"
        checks.append(Check("lengths", "prompt tokens", status, detail, fix))
    if answer_lengths:
        a95, top = percentile(answer_lengths, 0.95), max(answer_lengths)
        over = sum(1 for n in answer_lengths if n > max_completion_length) / len(answer_lengths)
        detail = (f"gold answers: p95 {a95}, max {top} tokens vs max_completion_length={max_completion_length}"
                  f"{f'; {over:.0%} are longer than the limit' if over else ''}")
        if over > 0.5:
            checks.append(Check("lengths", "answer tokens", "fail", detail,
                                f"raise training.max_completion_length above {int(a95 * 1.5)}: a completion "
                                "cannot contain the answer (and the reasoning before it) in fewer tokens"))
        elif over > 0.05 or a95 > 0.5 * max_completion_length:
            checks.append(Check("lengths", "answer tokens", "warn", detail,
                                f"leave room for reasoning: max_completion_length of about {int(a95 * 2)} or more"))
        else:
            checks.append(Check("lengths", "answer tokens", "ok", detail))
    return checks
