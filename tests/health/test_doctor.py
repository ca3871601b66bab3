"""doctor: environment, memory, lengths and the probe, on a tiny random Llama (grpokit.models.tiny)."""
import json
import subprocess
import sys

import pytest

from grpokit.config.run_config import from_dict
from grpokit.health.doctor import ProbeGroup, analyze_probe, config_checks, run_probe
from grpokit.rewards.reward_set import weighted_totals
from grpokit.health.doctor_checks import (
    ModelShape,
    check_environment,
    check_lengths,
    check_memory,
    estimate_memory,
    lora_params,
    needs_for,
    percentile,
)


@pytest.fixture(scope="module")
def tiny(tiny_gqa_model):
    """A 2-layer random Llama (grouped-query attention) and its tokenizer, built once per test run."""
    return tiny_gqa_model


def _rows(n=4):
    return [{"prompt": [{"role": "user", "content": f"what is {i} + {i}?"}], "answer": str(2 * i)} for i in range(n)]


def constant_reward(completions, **kwargs):
    return [0.0 for _ in completions]


def length_reward(completions, **kwargs):
    return [len(c[0]["content"]) / 10 for c in completions]


def _status(checks, name):
    (check,) = [c for c in checks if c.name == name]
    return check


def test_probe_reports_every_completion_truncated(tiny):
    # A model that never emits EOS with a short limit: every completion is cut; the doctor says so and fails.
    model, tok = tiny
    model.generation_config.suppress_tokens = [tok.eos_token_id]
    try:
        groups, checks = run_probe(model, tok, _rows(), [length_reward], num_generations=4,
                                   max_completion_length=8)
    finally:
        model.generation_config.suppress_tokens = None
    assert all(all(g.truncated) for g in groups) and all(n == 8 for g in groups for n in g.lengths)
    trunc = _status(checks, "truncation")
    assert trunc.status == "fail"
    assert "100% of 16 completions were cut at max_completion_length=8" in trunc.detail
    assert "max_completion_length" in trunc.fix


def test_probe_reports_reward_that_never_varies(tiny):
    # Random completions, a reward that is always 0: every group has zero variance -> no learning signal.
    model, tok = tiny
    groups, checks = run_probe(model, tok, _rows(), [constant_reward], num_generations=4,
                               max_completion_length=16)
    signal = _status(checks, "learning signal")
    assert signal.status == "fail"
    assert "100% of 4 groups" in signal.detail and "never varies" in signal.detail
    assert _status(checks, "reward constant_reward").status == "warn"
    assert "partial credit" in signal.fix


def test_probe_with_a_varying_reward_is_healthy(tiny):
    # Same model, a reward that follows completion length: groups vary, so the signal check passes.
    model, tok = tiny
    groups, checks = run_probe(model, tok, _rows(), [length_reward, constant_reward], [1.0, 0.0],
                               num_generations=4, max_completion_length=16)
    assert _status(checks, "learning signal").status == "ok"
    assert _status(checks, "reward length_reward").status == "ok"
    assert len(groups) == 4 and all(len(g.completions) == 4 for g in groups)


def test_config_checks_on_a_loaded_model(tiny):
    # The whole post-load doctor on a config built in code: memory, lengths and probe.
    model, tok = tiny
    cfg = from_dict({"name": "t", "model": {"lora": {"r": 4}}, "rewards": [{"name": "numeric_match"}],
                     "training": {"num_generations": 4, "max_completion_length": 4, "per_device_train_batch_size": 4}},
                    validate=False)
    model.generation_config.suppress_tokens = [tok.eos_token_id]
    try:
        checks = config_checks(cfg, model, tok, _rows(), [constant_reward], [1.0], probe_prompts=2, cuda=False)
    finally:
        model.generation_config.suppress_tokens = None
    by_name = {c.name: c for c in checks}
    assert by_name["estimate"].status == "ok" and "trainable" in by_name["estimate"].detail
    assert by_name["prompt tokens"].status == "ok"
    assert by_name["truncation"].status == "fail" and by_name["learning signal"].status == "fail"


@pytest.mark.parametrize("group_totals,expected", [
    ([[1.0, 1.0, 1.0, 1.0]] * 4, "fail"),                          # never varies
    ([[0.0, 1.0, 0.0, 1.0]] * 4, "ok"),                            # varies in every group
    ([[0.0, 1.0, 0.0, 1.0]] * 2 + [[0.0] * 4] * 2, "warn"),         # half the groups dead
    ([[None, None, None, 1.0]] * 4, "fail"),                       # one scored sample per group: no variance
])
def test_analyze_learning_signal(group_totals, expected):
    groups = [ProbeGroup("p", ["a", "b", "c", "d"], [3] * 4, [False] * 4, {"r": t}, t) for t in group_totals]
    assert _status(analyze_probe(groups, 64), "learning signal").status == expected


def test_analyze_flags_raising_and_none_rewards():
    groups = [ProbeGroup("p", ["a", "b"], [1, 1], [False, False], {"boom": [None, None], "none": [None, float(i)]},
                         [1.0, 1.0], errors={"boom": "KeyError: 'answer'"}) for i in range(3)]
    checks = analyze_probe(groups, 64)
    assert _status(checks, "reward boom").status == "fail" and "KeyError" in _status(checks, "reward boom").detail
    # Half None reaches max_none_frac=0.5: flagged, as the live reward_unscorable rule flags it.
    assert _status(checks, "reward none").status == "fail"


def test_weighted_totals_skip_none_like_trl():
    scores = {"a": [1.0, None, None], "b": [2.0, 3.0, None]}
    assert weighted_totals(scores, [0.5, 2.0], 3) == [4.5, 6.0, None]


@pytest.mark.parametrize("profile,training,model,needed", [
    ("cpu", {}, {}, set()),                                          # the CPU profile needs nothing optional
    ("vllm", {}, {}, {"vllm", "cuda"}),                              # vLLM generation runs on a GPU
    ("none", {"optim": "adamw_bnb_8bit"}, {}, {"bitsandbytes", "cuda"}),  # 8-bit AdamW is bitsandbytes
    ("unsloth", {}, {}, {"unsloth", "cuda"}),                        # Unsloth is GPU-only
    ("none", {"fp16": True}, {}, {"cuda"}),                          # fp16 AMP needs CUDA
    ("memory", {}, {"load_in_4bit": True}, {"bitsandbytes", "cuda"}),  # 4-bit weights
])
def test_needs_for(profile, training, model, needed):
    assert set(needs_for(profile, training, model)) == needed


def test_environment_fails_only_for_what_is_needed():
    versions = {"torch": "2.13.0", "transformers": "5", "trl": "1.16", "peft": "0.21",
                "bitsandbytes": None, "vllm": None, "unsloth": None, "deepspeed": None}
    plain = {c.name: c.status for c in check_environment({}, versions=versions, cuda=False)}
    assert plain["CUDA"] == "info" and plain["vllm"] == "info" and "fail" not in plain.values()
    needy = {c.name: c for c in check_environment(needs_for("vllm", {}, {}), versions=versions, cuda=False)}
    assert needy["CUDA"].status == "fail" and needy["vllm"].status == "fail"
    assert "grpokit[vllm]" in needy["vllm"].fix
    assert "TRL hooks" not in plain  # no problems passed: the hooks were not read


def test_environment_reports_a_trl_without_grpokits_hooks_before_training():
    versions = {"torch": "2.13.0", "transformers": "5", "trl": "1.17", "peft": "0.21"}
    gone = ["TRL 1.17: GRPOTrainer has no _generate (grpokit overrides it for the step's progress line)"]
    hooks = {c.name: c for c in check_environment({}, versions=versions, cuda=False, trl_problems=gone)}["TRL hooks"]
    assert hooks.status == "fail" and "no _generate" in hooks.detail and "trl>=1.16,<1.17" in hooks.fix
    fine = {c.name: c for c in check_environment({}, versions=versions, cuda=False, trl_problems=[])}
    assert fine["TRL hooks"].status == "ok"


def test_lora_params_and_memory_estimate():
    linears = [("layers.0.q_proj", 64, 64), ("layers.0.down_proj", 256, 64), ("lm_head", 64, 1000)]
    assert lora_params(linears, 8, "all-linear") == 8 * (128 + 320)      # lm_head excluded
    assert lora_params(linears, 8, ["q_proj"]) == 8 * 128
    shape = ModelShape(n_params=135_000_000, hidden=576, layers=30, vocab=49152, kv_dim=192, linears=linears)
    lora = estimate_memory(shape, weight_bytes=2, lora_r=16, optim="adamw_torch")
    full = estimate_memory(shape, weight_bytes=2, lora_r=None, optim="adamw_torch", beta=0.04)
    assert lora["optimizer"] < 1e6 < full["optimizer"]          # LoRA's optimizer state is tiny
    assert full["reference model"] == full["weights"] and lora["reference model"] == 0
    eight = estimate_memory(shape, weight_bytes=2, lora_r=None, optim="adamw_bnb_8bit")
    assert eight["optimizer"] < full["optimizer"]
    assert check_memory(full, full["total"] * 0.5, "GPU")[0].status == "fail"
    assert check_memory(full, full["total"] * 2, "GPU")[0].status == "ok"


@pytest.mark.parametrize("prompts,answers,limit,context,expected", [
    ([10, 20, 30], [3, 4, 5], 64, 512, {"prompt tokens": "ok", "answer tokens": "ok"}),        # fits
    ([10, 20, 30], [100, 120, 90], 64, 512, {"prompt tokens": "ok", "answer tokens": "fail"}),  # answers longer than limit
    ([500, 500, 10], [3, 3, 3], 64, 512, {"prompt tokens": "fail", "answer tokens": "ok"}),     # prompt + limit > context
    ([10, 20], [30, 30], 50, None, {"prompt tokens": "ok", "answer tokens": "warn"}),           # little room to reason
])
def test_check_lengths(prompts, answers, limit, context, expected):
    assert {c.name: c.status for c in check_lengths(prompts, answers, limit, context)} == expected


def test_percentile():
    assert percentile([5, 1, 3, 2, 4], 0.5) == 3 and percentile([], 0.9) == 0 and percentile([7], 0.95) == 7


def test_cli_doctor_without_config_checks_environment():
    proc = subprocess.run([sys.executable, "-m", "grpokit", "doctor", "--json"], capture_output=True, text=True,
                          timeout=120)
    checks = json.loads(proc.stdout)
    names = {c["name"] for c in checks}
    assert {"torch", "CUDA", "vllm", "unsloth", "bitsandbytes", "TRL hooks"} <= names
    from grpokit.training.trl_hooks import missing

    hooks = next(c for c in checks if c["name"] == "TRL hooks")
    assert hooks["status"] == ("fail" if missing() else "ok")
    assert proc.returncode == (1 if any(c["status"] == "fail" for c in checks) else 0)


def test_cli_doctor_missing_config_is_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "grpokit", "doctor", str(tmp_path / "nope.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "not found" in proc.stderr


def _write_config(path, max_completion_length):
    path.write_text(
        "name: doctor-test\n"
        "model: {name: bundled:smollm2-135m-instruct}\n"
        "data: {source: 'synthetic:arithmetic', max_samples: 20}\n"
        "rewards:\n  - {name: numeric_match, weight: 1.0}\n"
        "profile: cpu\n"
        f"training: {{num_generations: 4, per_device_train_batch_size: 4, max_completion_length: {max_completion_length}}}\n"
    )
    return path


@pytest.mark.parametrize("limit,suppress_eos,failing", [
    # 8 tokens and a model that never stops: every completion cut -> truncation fails
    (8, True, "truncation"),
    # a random model never writes the right number: numeric_match never varies -> no learning signal
    (16, False, "learning signal"),
])
def test_doctor_on_config_files(tiny, tmp_path, monkeypatch, limit, suppress_eos, failing):
    """The whole `grpokit doctor CONFIG` path (config, rewards, data) with the tiny model swapped in."""
    from typer.testing import CliRunner

    import grpokit.health.doctor as doctor
    from grpokit.cli import app

    model, tok = tiny
    monkeypatch.setattr(doctor, "_load_model", lambda cfg: (model, tok))
    model.generation_config.suppress_tokens = [tok.eos_token_id] if suppress_eos else None
    try:
        checks = doctor.run_doctor(_write_config(tmp_path / "c.yaml", limit), probe_prompts=2)
        result = CliRunner().invoke(app, ["doctor", str(tmp_path / "c.yaml"), "--probe-prompts", "2"])
    finally:
        model.generation_config.suppress_tokens = None
    by_name = {c.name: c for c in checks}
    assert by_name[failing].status == "fail"
    if failing == "truncation":
        assert "100% of 8 completions were cut" in by_name[failing].detail
    else:
        assert "never varies" in by_name[failing].detail
    assert result.exit_code == 1 and failing in result.output


def test_cpu_load_warns_when_other_jobs_hold_the_cores():
    from grpokit.health.doctor_checks import check_cpu_load

    busy = check_cpu_load(load=1.9, cores=2, threads=2)
    assert busy.status == "warn"
    assert "OMP_NUM_THREADS=1" in busy.fix
    assert check_cpu_load(load=0.1, cores=2, threads=2).status == "ok"
    # One thread on a half-busy 2-core machine has a core of its own.
    assert check_cpu_load(load=1.0, cores=2, threads=1).status == "ok"
    assert check_cpu_load(load=3.0, cores=16, threads=8).status == "ok"
    assert check_cpu_load(load=12.0, cores=16, threads=8).status == "warn"


def _smollm2_shape():
    linears = []
    for i in range(30):
        for name, n_in, n_out in (("q_proj", 576, 576), ("k_proj", 576, 192), ("v_proj", 576, 192),
                                  ("o_proj", 576, 576), ("gate_proj", 576, 1536), ("up_proj", 576, 1536),
                                  ("down_proj", 1536, 576)):
            linears.append((f"model.layers.{i}.{name}", n_in, n_out))
    linears.append(("lm_head", 576, 49152))
    return ModelShape(n_params=134_515_008, hidden=576, layers=30, vocab=49152, kv_dim=192, linears=linears,
                      heads=9)


@pytest.mark.parametrize("dropout,measured_gb", [(0.0, 7.17), (0.05, 9.18)])
def test_memory_estimate_matches_a_measured_cpu_run(dropout, measured_gb):
    # Peak RSS of one real step of configs/cpu-demo.yaml (batch 8, 139 prompt + 96 completion
    # tokens, float32, LoRA r=16, CPU), measured by benchmarks/memory_estimate.py.
    from grpokit.health.doctor_checks import CPU_RUNTIME_BYTES

    parts = estimate_memory(_smollm2_shape(), weight_bytes=4, lora_r=16, per_device_batch=8, generation_batch=8,
                            prompt_len=139, completion_len=96, act_bytes=4, runtime=CPU_RUNTIME_BYTES,
                            lora_dropout=dropout, attention_matrices=True)
    assert parts["total"] / 1e9 == pytest.approx(measured_gb, rel=0.15)


def test_memory_estimate_terms_move_the_right_way():
    shape = _smollm2_shape()
    base = dict(weight_bytes=4, lora_r=16, per_device_batch=8, prompt_len=139, completion_len=96, act_bytes=4)
    plain = estimate_memory(shape, **base)
    assert estimate_memory(shape, **base, lora_dropout=0.05)["activations"] > plain["activations"]
    assert estimate_memory(shape, **base, gradient_checkpointing=True)["activations"] < 0.7 * plain["activations"]
    cpu = estimate_memory(shape, **base, attention_matrices=True)
    longer = estimate_memory(shape, **{**base, "completion_len": 96 + 235}, attention_matrices=True)
    assert longer["attention matrices"] == pytest.approx(4 * cpu["attention matrices"])  # quadratic in length
    assert plain["logits"] == 0 < estimate_memory(shape, **base, fused_lm_head=False)["logits"]


def test_the_probe_fix_never_advises_a_format_reward_the_config_has():
    # Issue 35.10: "add a format reward such as incremental_format" to a config with incremental_format
    # scoring 0 on every completion.
    scores = {"numeric_match": [0.0] * 4, "incremental_format": [0.0] * 4}
    groups = [ProbeGroup("p", ["a", "b", "c", "d"], [3] * 4, [False] * 4, dict(scores), [0.0] * 4) for _ in range(4)]
    check = _status(analyze_probe(groups, 64), "learning signal")
    assert check.status == "fail" and "add a format reward" not in check.fix
    assert "incremental_format is in the rewards already and scores 0 on every completion" in check.fix
    plain = [ProbeGroup("p", ["a", "b"], [3] * 2, [False] * 2, {"numeric_match": [0.0] * 2}, [0.0] * 2)] * 4
    assert "add a format reward such as incremental_format" in _status(analyze_probe(plain, 64), "learning signal").fix
