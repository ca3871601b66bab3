"""The reward library: a registry of TRL-compatible reward functions.

    from grpokit.rewards import get, names, combine, preset
    numeric = get("numeric_match", rel_tol=0.01)
"""
from grpokit.rewards.registry import (  # noqa: F401
    RewardConfigError,
    canonical,
    describe,
    get,
    names,
    register,
)
from grpokit.rewards.combine import combine  # noqa: F401,E402
