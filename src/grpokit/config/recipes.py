"""The shipped recipes (configs/*.yaml): where they are and what each one trains for."""
from __future__ import annotations

from pathlib import Path

import yaml

# What each profile needs to run.
HARDWARE = {
    "cpu": "any CPU (a GPU is used when present)",
    "memory": "1 CUDA GPU; 8-bit AdamW with bitsandbytes",
    "vllm": "CUDA GPU(s) with vLLM",
    "unsloth": "1 CUDA GPU with Unsloth",
}


def recipes_dir() -> Path:
    """configs/ of this checkout (src layout), else of the current directory."""
    here = Path(__file__).resolve().parents[3] / "configs"
    return here if here.is_dir() else Path.cwd() / "configs"


def recipe_summary(path: Path) -> dict:
    """One row of `grpokit recipes`, read from the recipe itself so the list cannot drift."""
    text = path.read_text()
    raw = yaml.safe_load(text) or {}
    # The recipe's opening comment block says what it trains for when it has no description.
    lead = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lead.append(line.lstrip("# ").strip())
    profile = raw.get("profile", "cpu")
    return {
        "recipe": path.stem,
        "path": str(path),
        "trains_for": raw.get("description") or " ".join(lead),
        "model": (raw.get("model") or {}).get("name", "bundled:smollm2-135m-instruct"),
        "profile": profile,
        "hardware": HARDWARE.get(profile, profile),
        "stages": len(raw.get("stages") or []) or 1,
    }
