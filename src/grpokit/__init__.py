"""grpokit: GRPO training toolkit on top of TRL."""

__version__ = "0.1.0"
