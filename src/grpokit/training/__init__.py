"""Training: model and LoRA loading (`models`), TRL's GRPOTrainer stage by stage
(`trainer`), what a run writes while it trains (`callbacks`), crash-safe
checkpoints and resume (`checkpoints`), and which process of a launch this is (`ranks`).

Nothing here is imported by the package's import, so `grpokit --help` stays instant.
"""
