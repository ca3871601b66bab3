"""`grpokit.debug.debug_reward`, the public name the design promises; the code lives in grpokit.rewards.debug."""
from grpokit.rewards.debug import debug_reward  # noqa: F401
