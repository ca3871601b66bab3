"""The run config: the YAML file's dataclasses and their validation (`run_config`),
the profiles layered under `training:` (`profiles`), the ranges of its numbers
(`training_fields`), the bounded YAML reader (`safe_yaml`) and the user's own
modules named in `imports:` (`plugins`).

Kept free of imports so that `grpokit.config.profiles` and `grpokit.config.run_config`,
which name each other, load in either order.
"""
