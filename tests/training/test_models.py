"""Model loading: the bundled GGUF cache, local dirs, LoRA defaults, tokenizer padding, Unsloth errors."""
from __future__ import annotations

import json

import pytest

from grpokit import bundled
from grpokit.models import loading as models
from grpokit.config.run_config import LoraConfig, ModelConfig
from grpokit.errors import ConfigError



@pytest.fixture(scope="module")
def tiny(tiny_roles_model_dir):
    return tiny_roles_model_dir  # saved once per test run (conftest.py)


def test_local_dir_with_lora_defaults(tiny):
    model, tok = models.load_model(ModelConfig(name=str(tiny)), dtype="float32")
    peft_cfg = model.peft_config["default"]
    # r=16, alpha=2r, every linear layer of attention and MLP.
    assert (peft_cfg.r, peft_cfg.lora_alpha) == (16, 32)
    assert {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"} <= {m.rsplit(".", 1)[-1] for m in peft_cfg.target_modules}
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert tok.padding_side == "left" and tok.pad_token is not None


def test_no_lora_trains_every_weight(tiny):
    model, _ = models.load_model(ModelConfig(name=str(tiny), lora=None), dtype="bfloat16")
    assert not hasattr(model, "peft_config")
    assert next(model.parameters()).dtype.is_floating_point and str(next(model.parameters()).dtype) == "torch.bfloat16"


def test_pad_token_falls_back_to_eos(tiny, tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny)
    tok.pad_token = None
    tok.save_pretrained(tmp_path / "tok")
    again = models.load_tokenizer(str(tmp_path / "tok"))
    assert again.pad_token == again.eos_token and again.padding_side == "left"


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Qwen/Qwen2.5-1.5B-Instruct", ("Qwen/Qwen2.5-1.5B-Instruct", {})),  # hub id passes through
    ],
)
def test_resolve_hub_id(name, expected):
    assert models.resolve_source(name) == expected


def test_resolve_gguf_file(tmp_path):
    gguf = tmp_path / "m.Q4.gguf"
    gguf.write_bytes(b"GGUF")
    # transformers loads a GGUF through the folder plus gguf_file=.
    assert models.resolve_source(str(gguf)) == (str(tmp_path), {"gguf_file": "m.Q4.gguf"})
    with pytest.raises(ConfigError, match="not found"):
        models.resolve_source(str(tmp_path / "missing.gguf"))


def test_unknown_bundled_name():
    with pytest.raises(ConfigError, match="smollm2-135m-instruct"):
        bundled.ensure_bundled("bundled:gpt-5")


@pytest.mark.parametrize("name", ["smollm2-135m-instruct", "bundled:smollm2-135m-instruct"])
def test_the_bundled_path_for_a_plain_script_takes_either_name(tmp_path, monkeypatch, name):
    # Issue 35.10: ensure_bundled("smollm2-135m-instruct") was refused without `bundled:`, and no public way
    # gave a plain TRL script the model's folder. bundled_path is it; both names reach the same cached folder.
    monkeypatch.setenv("GRPOKIT_CACHE", str(tmp_path))
    cached = tmp_path / "models" / "smollm2-135m-instruct"
    cached.mkdir(parents=True)
    (cached / "config.json").write_text("{}")  # a converted checkpoint: nothing to convert
    assert bundled.bundled_path(name) == cached == bundled.ensure_bundled(name) == bundled.bundled_path()
    with pytest.raises(ConfigError, match="choose one of smollm2-135m-instruct"):
        bundled.bundled_path("gpt-5")


def test_failed_conversion_leaves_no_cache(tmp_path, monkeypatch):
    # A crash mid-conversion must not leave a folder that later loads would trust.
    monkeypatch.setenv("GRPOKIT_CACHE", str(tmp_path))

    def boom(gguf, out):
        (out / "config.json").write_text("{}")
        raise RuntimeError("disk full")

    monkeypatch.setattr(bundled, "_convert_gguf", boom)
    with pytest.raises(RuntimeError):
        bundled.ensure_bundled("bundled:smollm2-135m-instruct")
    assert list((tmp_path / "models").iterdir()) == []


def test_unsloth_backend_without_gpu(monkeypatch):
    monkeypatch.setattr(models.optional, "cuda_available", lambda: False)
    with pytest.raises(ConfigError, match="needs a CUDA GPU"):
        models.load_model(ModelConfig(backend="unsloth"), backend="unsloth")


def test_peft_config_from_lora():
    cfg = models.peft_config(LoraConfig(r=4, target_modules=["q_proj"]))
    assert (cfg.r, cfg.lora_alpha, cfg.target_modules, cfg.task_type) == (4, 8, {"q_proj"}, "CAUSAL_LM")


@pytest.mark.slow
def test_bundled_model_converts_once_and_reloads_fast(cpu_clock):
    pytest.importorskip("gguf")
    try:
        bundled.bundled_gguf("bundled:smollm2-135m-instruct")
    except ConfigError as exc:
        pytest.skip(str(exc))
    path = bundled.ensure_bundled("bundled:smollm2-135m-instruct")  # converts on the first run only
    config = json.loads((path / "config.json").read_text())
    # Saved as a plain Llama checkpoint: no GGUF quantization marker left behind.
    assert "quantization_config" not in config and config["model_type"] == "llama"
    with cpu_clock() as clock:  # CPU seconds: a loaded machine does not inflate them
        model, tok = models.load_model(ModelConfig(lora=None), dtype="bfloat16")
    assert model.config.num_hidden_layers == 30 and tok.chat_template
    assert clock.seconds < 10, f"reloading the cached bundled model took {clock.seconds:.1f} CPU s"  # ~0.6 s idle


@pytest.mark.parametrize(
    "prefix",
    [
        "<reasoning>\n",  # the demo's prefill: a newline must survive the Jinja literal
        "it's \\ done",  # quotes and backslashes are escaped, not template syntax
    ],
)
def test_response_prefix_opens_the_answer(tiny, prefix):
    tok = models.load_tokenizer(str(tiny))
    before = tok.apply_chat_template([{"role": "user", "content": "q"}], tokenize=False, add_generation_prompt=True)
    models.add_response_prefix(tok, prefix)
    after = tok.apply_chat_template([{"role": "user", "content": "q"}], tokenize=False, add_generation_prompt=True)
    assert after == before + prefix
    # Rendering a finished conversation (no generation prompt) is unchanged.
    plain = tok.apply_chat_template([{"role": "user", "content": "q"}], tokenize=False)
    assert not plain.endswith(prefix)
