"""The reward library: a registry of TRL-compatible reward functions.

    from grpokit.rewards import get, names, combine, preset
    numeric = get("numeric_match", rel_tol=0.01)
"""
from grpokit.rewards.registry import (  # noqa: F401
    RewardConfigError,
    canonical,
    describe,
    family,
    get,
    names,
    register,
)
from grpokit.rewards._bound import BatchReward, TextReward  # noqa: F401,E402  (for picklable custom factories)
from grpokit.rewards.combine import combine  # noqa: F401,E402
from grpokit.rewards.presets import get_preset, preset, preset_spec, presets  # noqa: F401,E402


def __getattr__(attr: str):
    # MATH_REASONING_REWARDS etc. are built on first access (see presets.py),
    # so importing grpokit.rewards never fails on a reward not yet registered.
    if attr.endswith(("_REWARDS", "_WEIGHTS")):
        import importlib

        return getattr(importlib.import_module("grpokit.rewards.presets"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
