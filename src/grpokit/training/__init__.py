"""Training, the last stage of a run: the stages on grpokit's GRPOTrainer subclass
(`trainer`, `grpo_trainer`), what a run writes while it trains (`callbacks`), and
crash-safe checkpoints and resume (`checkpoints`). Model loading is the `grpokit.models`
leaf; the run directory's names and which process writes them, `grpokit.run_directory`.

Nothing here is imported by the package's import, so `grpokit --help` stays instant.
"""
