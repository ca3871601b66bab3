"""Every recipe in configs/ loads and validates; GPU recipes are checked down to their GRPOConfig."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from grpokit.config import profiles
from grpokit.config.run_config import load_config
from grpokit.errors import ConfigError
from grpokit.rewards import names, register

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted((ROOT / "configs").glob("*.yaml"))


@pytest.fixture(scope="module", autouse=True)
def _reward_stand_ins():
    """Reward families merged from other branches may be absent in a partial checkout:
    stand in for those names (only when missing) so the rest of each recipe is still checked."""
    import yaml

    wanted = set()
    for path in RECIPES:
        raw = yaml.safe_load(path.read_text())
        specs = list(raw.get("rewards") or [])
        for stage in raw.get("stages") or []:
            specs += stage.get("rewards") or []
        wanted |= {s["name"] for s in specs}
    for name in sorted(wanted - set(names())):
        register(name)(lambda **params: (lambda completions, **kw: [0.0] * len(completions)))


def test_every_recipe_is_here():
    stems = {p.stem for p in RECIPES}
    assert {"cpu-demo", "math-qwen-memory", "math-qwen-vllm", "math-unsloth", "math-multistage",
            "code-generation", "qa-csv", "summarization", "json-output"} <= stems


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.stem)
def test_recipe_validates(path):
    cfg = load_config(path)  # unknown keys, batch sizes, rewards and data columns
    assert cfg.rewards and cfg.name
    for stage in cfg.stages or [None]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", profiles.ProfileWarning)
            # As a CUDA machine with bitsandbytes would build it: the GPU settings themselves are checked by TRL.
            args = profiles.build_grpo_config(cfg, stage, check_hardware=False, cuda=True, bnb=True, bf16_cpu=False)
        assert args.generation_batch_size % args.num_generations == 0
        assert args.logging_steps == 1


# What each GPU recipe must turn into (field by field), so a profile change cannot silently drop it.
GPU_EXPECTED = {
    "math-qwen-memory": dict(optim="adamw_bnb_8bit", gradient_checkpointing=True, per_device_train_batch_size=2,
                             gradient_accumulation_steps=4, bf16=True, max_completion_length=512),
    "math-qwen-vllm": dict(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=0.35,
                           generation_batch_size=32, bf16=True),
    "math-unsloth": dict(optim="adamw_8bit", gradient_checkpointing=False, bf16=True),
    "code-generation": dict(optim="adamw_bnb_8bit", gradient_checkpointing=True),
    "summarization": dict(optim="adamw_bnb_8bit", max_completion_length=96),
}


@pytest.mark.parametrize("stem, expected", sorted(GPU_EXPECTED.items()))
def test_gpu_recipe_grpo_config(stem, expected):
    cfg = load_config(ROOT / "configs" / f"{stem}.yaml")
    args = profiles.build_grpo_config(cfg, check_hardware=False, cuda=True, bnb=True, bf16_cpu=False)
    for key, value in expected.items():
        assert getattr(args, key) == value, key


def test_multistage_recipe_stages():
    cfg = load_config(ROOT / "configs" / "math-multistage.yaml")
    first, second = cfg.stages
    a = profiles.grpo_kwargs(cfg, first, cuda=True, bnb=True, bf16_cpu=False)
    b = profiles.grpo_kwargs(cfg, second, cuda=True, bnb=True, bf16_cpu=False)
    # Stage 1 trains the format alone with shorter completions; stage 2 adds correctness.
    assert [r.name for r in first.rewards] == ["incremental_format"] and second.rewards is None
    assert (a["max_steps"], a["max_completion_length"]) == (50, 256)
    assert (b["max_steps"], b["max_completion_length"]) == (300, 512)
    assert a["output_dir"].endswith("checkpoints/format") and b["output_dir"].endswith("checkpoints/correctness")


@pytest.mark.parametrize("stem", ["math-qwen-vllm", "math-unsloth"])
def test_gpu_recipes_stop_at_run_time_without_gpu(stem):
    from grpokit.optional import cuda_available

    if cuda_available():
        pytest.skip("a GPU is present")
    cfg = load_config(ROOT / "configs" / f"{stem}.yaml")
    with pytest.raises(ConfigError, match="CUDA GPU"):
        profiles.check_runtime(cfg)


def test_demo_recipe_matches_the_demo_command():
    # `grpokit demo` works without the configs/ folder (installed package); keep both in step.
    from grpokit.demo import demo_config

    assert load_config(ROOT / "configs" / "cpu-demo.yaml") == demo_config()


def test_words_recipe_matches_its_config_file():
    from grpokit.demo import demo_config, prompt_shape
    from grpokit.demo_recipes import RECIPES

    assert load_config(ROOT / "configs" / "cpu-demo-transfer.yaml") == demo_config(recipe=RECIPES["words"])
    assert prompt_shape({"prompt": "Question: Find the total of 4 and 5.\nAnswer:"}) == "asked in words, stops at Answer:"
    assert prompt_shape({"prompt": "Question: What is 4 + 5?\nAnswer: 4 + 5 ="}).startswith("the sum restated")
    assert prompt_shape({"prompt": "4 + 5 ="}).startswith("a bare sum")


def test_demo_summary_leads_with_held_out_accuracy_before_and_after():
    from grpokit.demo import _print_summary

    lines: list[str] = []
    group = {"prompts": 2, "accuracy": 0.5}
    _print_summary(lines.append, {
        "run_dir": "runs/x", "steps": 40, "train_seconds": 400.0, "training_window": {}, "alerts": [],
        "held_out_during": [{"step": 0, "accuracy": 0.1}],
        "eval": {"before": {"accuracy": 0.065, "prompts": 200, "by_group": {"asked in words": {**group, "accuracy": 0.0}}},
                 "after": {"accuracy": 0.645, "prompts": 200, "by_group": {"asked in words": group}}},
    })
    said = [line for line in lines if line.strip()]
    assert said[0] == "held-out accuracy (200 prompts never trained on): 0.065 before -> 0.645 after"
    assert said[1] == "  prompts asked in words (2): 0.000 -> 0.500"
    assert said[2].startswith("run directory: runs/x")


def test_csv_recipe_resolves_from_another_directory(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    cfg = load_config(ROOT / "configs" / "qa-csv.yaml")
    assert Path(cfg.data.source).is_file()
