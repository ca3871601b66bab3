"""One prepared check of the production recipes on a GPU: step time, peak memory, the doctor's
estimate against it, generation speed and the health callback's cost, in one JSON.

    python -m benchmarks.gpu_check [--out benchmarks/results/gpu_check.json] [--budget-s 450]
    python -m benchmarks.gpu_check --tiny --out /tmp/gpu_check.json     # CPU, toy widths (the test)
    bash benchmarks/gpu_check.sh                                      # on the device machine (README)

Models: random-weight Qwen2.5-1.5B and SmolLM2-135M built from their configs
(benchmarks/model_shapes.py), LoRA r=16 on every linear layer as in
configs/math-qwen-memory.yaml, 8 completions per prompt, fixed-length generation.
Runs, in priority order, each in a fresh process (benchmarks/gpu_check_worker.py):

    prepare            save the models, generation tokens/s on each, describe the machine
    memory             profile `memory` (8-bit AdamW, or its fallback where bitsandbytes is
                       missing: the JSON's memory_profile says which was measured)
    (memory_fallback   only where `memory` failed with bitsandbytes present: plain AdamW)
    lora_bf16          plain bf16 LoRA: bf16 weights, no checkpointing, AdamW, 8 per micro-batch
    none               TRL's defaults (float32 weights, bf16 autocast, checkpointing)
    lora_bf16_large    lora_bf16 with a larger micro-batch: peak memory must grow with it
    smollm_lora_bf16   the demo's model under lora_bf16: a short step, the health callback's worst case

Peak memory is torch.cuda.max_memory_allocated() on a GPU and the process's peak RSS
(VmHWM) on a CPU (what the doctor's estimate means on each). Every run has its own
timeout and the whole check a time budget: a run that would not fit is recorded as
skipped, and the JSON is rewritten after each run, so a cut-short check still leaves
its partial results.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "gpu_check.json"
MODELS = ("qwen2.5-1.5b", "smollm2-135m")

# Sizes per mode. Full: what the production recipe does per step, trimmed so the whole check
# fits its budget on one GPU; tiny: the same runs at toy sizes for a 2-core CPU.
SIZES = {
    "full": {"num_generations": 8, "completion_tokens": 256, "steps": 3, "micro_batch": 8, "large_batch": 16,
             "generation_batch": 8, "generation_tokens": 256, "budget_s": 450, "prepare_timeout_s": 150,
             "train_timeout_s": 120},
    "tiny": {"num_generations": 4, "completion_tokens": 8, "steps": 2, "micro_batch": 4, "large_batch": 16,
             "generation_batch": 4, "generation_tokens": 8, "budget_s": 900, "prepare_timeout_s": 300,
             "train_timeout_s": 300},
}
MIN_RUN_S = 30  # a run is not started with less time left than this


def train_specs(sizes: dict, models_dir: Path) -> dict[str, dict]:
    """name -> the worker's spec for each training run, in priority order."""
    base = {"num_generations": sizes["num_generations"], "completion_tokens": sizes["completion_tokens"],
            "steps": sizes["steps"], "model_dir": str(models_dir / MODELS[0])}
    plain_bf16 = {"profile": "none", "model": {"dtype": "bfloat16"},
                  "training": {"bf16": True, "gradient_checkpointing": False, "optim": "adamw_torch",
                               "per_device_train_batch_size": sizes["micro_batch"]}}
    large = {**plain_bf16, "training": {**plain_bf16["training"], "per_device_train_batch_size": sizes["large_batch"]}}
    specs = {
        "memory": {"profile": "memory"},
        "lora_bf16": plain_bf16,
        "none": {"profile": "none"},
        "lora_bf16_large": large,
        "smollm_lora_bf16": {**plain_bf16, "model_dir": str(models_dir / MODELS[1])},
    }
    specs = {name: {**base, "name": name, **spec} for name, spec in specs.items()}
    if sizes is SIZES["tiny"]:
        # float32 throughout: most CPUs emulate bf16 (a toy step took 5x longer), and the tiny
        # runs check that the script works, not what bf16 costs. Each run's JSON shows its dtype.
        for spec in specs.values():
            spec["model"] = {**spec.get("model", {}), "dtype": "float32"}
            spec["training"] = {**spec.get("training", {}), "bf16": False}
    return specs


def commit() -> str:
    """The commit measured: git's HEAD (+ '-dirty' for uncommitted changes), else $GRPOKIT_COMMIT."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=20)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=20)
        if head.returncode == 0:
            return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return os.environ.get("GRPOKIT_COMMIT") or "unknown (no git checkout here: set GRPOKIT_COMMIT)"


def run_worker(kind: str, spec: dict, timeout: float, *, threads: int | None = None) -> dict:
    """Run one measurement in a fresh process; {"status": "ok", ...result} or {"status": "failed", "error"}.

    `threads`: torch's CPU threads. The tiny runs use one: on a shared CPU, torch's spinning
    OpenMP threads wait for cores other jobs hold (a toy step took 10-40 s at load 8 with two).
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"}
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    started = time.perf_counter()
    # Its own process group (not session: the device machine ends a command's processes with
    # it, except new sessions), so a timeout ends the worker and anything it started.
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.gpu_check_worker", kind, json.dumps(spec)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **group)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"status": "failed", "error": f"timed out after {timeout:.0f} s", "seconds": round(timeout, 1)}
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): leave no worker holding the GPU
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    seconds = round(time.perf_counter() - started, 1)
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        return {"status": "failed", "error": f"exit {proc.returncode}: {stderr[-3000:]}", "seconds": seconds}
    return {"status": "ok", **json.loads(lines[-1][len("RESULT "):]), "seconds": seconds}


def bnb_present(result: dict) -> bool:
    return bool(result.get("machine", {}).get("bitsandbytes_importable"))


def summarize(result: dict, sizes: dict) -> None:
    """The derived answers: which optimizer `memory` measured, whether peak grows with batch."""
    train = result["train"]
    memory = train.get("memory", {})
    if memory.get("status") != "ok":
        memory = train.get("memory_fallback", {})
    if memory.get("status") == "ok":
        result["memory_profile"] = {
            "bitsandbytes_present": bnb_present(result),
            "optim_measured": memory["optim"],
            "fallback_measured": "8bit" not in memory["optim"],
        }
        if train["memory"].get("status") == "failed":
            result["memory_profile"]["bitsandbytes_error"] = train["memory"]["error"][-500:]
    small, large = train.get("lora_bf16", {}), train.get("lora_bf16_large", {})
    if small.get("status") == large.get("status") == "ok":
        result["batch_growth"] = {
            "micro_batches": [sizes["micro_batch"], sizes["large_batch"]],
            "peak_gb": [small["peak_gb"], large["peak_gb"]],
            "grows": large["peak_gb"] > small["peak_gb"],
        }
    result["estimate_vs_measured"] = {name: run["estimate_ratio"] for name, run in train.items()
                                      if run.get("status") == "ok"}


def write(result: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
    os.replace(tmp, out)


def print_table(result: dict) -> None:
    print(f"{'run':18} {'status':7} {'optim':16} {'step s':>8} {'peak GB':>8} {'estimate':>8} {'ratio':>6} {'health':>8}")
    for name, run in result["train"].items():
        if run.get("status") != "ok":
            print(f"{name:18} {run.get('status', '?'):7} {run.get('error', run.get('reason', ''))[:80]}")
            continue
        gb = 2**30 / 1e9
        print(f"{name:18} ok      {run['optim'][:16]:16} {run['median_step_s']:8.3f} {run['peak_gb'] * gb:8.2f} "
              f"{run['estimate_gb'] * gb:8.2f} {run['estimate_ratio']:6.2f} {run['health_share_of_step']:8.2%}")
    for name, gen in result.get("generation", {}).items():
        print(f"generation {name}: {gen['tokens_per_s']:.0f} tokens/s (batch {gen['batch']}, {gen['new_tokens']} new)")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="toy model widths, for a CPU (the test suite runs this)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--budget-s", type=float, help="total time for every run (default: 450 full, 900 tiny)")
    parser.add_argument("--only", action="append", help="run only this training run (repeatable)")
    args = parser.parse_args(argv)
    mode = "tiny" if args.tiny else "full"
    sizes = SIZES[mode]
    budget = args.budget_s or sizes["budget_s"]
    deadline = time.monotonic() + budget
    threads = 1 if args.tiny else None
    # SIGTERM (a runner's timeout) as an exception, so the running worker is ended with us.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    result: dict = {"benchmark": "gpu_check", "mode": mode,
                    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit(),
                    "peak_memory_measure": None, "budget_s": budget, "sizes": sizes, "train": {}}
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        models_dir = Path(tmp)
        specs = train_specs(sizes, models_dir)
        unknown = sorted(set(args.only or []) - set(specs))
        if unknown:
            parser.error(f"unknown run(s) {', '.join(unknown)}; choose from {', '.join(specs)}")
        prepared = run_worker("prepare", {"models_dir": str(models_dir), "models": list(MODELS), "tiny": args.tiny,
                                          "generation_batch": sizes["generation_batch"],
                                          "generation_tokens": sizes["generation_tokens"]},
                              min(sizes["prepare_timeout_s"], budget), threads=threads)
        result["prepare"] = {k: prepared[k] for k in ("status", "seconds", "error") if k in prepared}
        result["machine"] = prepared.get("machine", {})
        result["generation"] = prepared.get("generation", {})
        cuda = bool(result["machine"].get("cuda"))
        result["peak_memory_measure"] = "torch.cuda.max_memory_allocated" if cuda else "peak RSS (VmHWM)"
        write(result, args.out)
        for name, spec in specs.items():
            if args.only and name not in args.only:
                continue
            left = deadline - time.monotonic()
            if prepared["status"] != "ok":
                result["train"][name] = {"status": "skipped", "reason": "the models could not be prepared"}
            elif left < MIN_RUN_S:
                result["train"][name] = {"status": "skipped", "reason": f"time budget: {left:.0f} s left"}
            else:
                print(f"{name}: running (timeout {min(sizes['train_timeout_s'], left):.0f} s)", flush=True)
                result["train"][name] = run_worker("train", spec, min(sizes["train_timeout_s"], left),
                                                       threads=threads)
            if name == "memory" and result["train"][name]["status"] == "failed" and bnb_present(result):
                # 8-bit AdamW broke on this machine: measure the fallback users without it get.
                left = deadline - time.monotonic()
                fallback = {**spec, "training": {**spec.get("training", {}), "optim": "adamw_torch"}}
                result["train"]["memory_fallback"] = (
                    run_worker("train", fallback, min(sizes["train_timeout_s"], left), threads=threads)
                    if left >= MIN_RUN_S else {"status": "skipped", "reason": f"time budget: {left:.0f} s left"})
            summarize(result, sizes)
            write(result, args.out)
    result["elapsed_s"] = round(budget - (deadline - time.monotonic()), 1)
    write(result, args.out)
    print_table(result)
    print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
