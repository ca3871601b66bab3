"""The run config: the YAML file's dataclasses and their validation (`run_config`),
the profiles layered under `training:` (`profiles`), the ranges of its numbers
(`training_fields`), the `eval:` and `health:` sections (`eval_section`, `health_section`),
the bounded YAML reader (`safe_yaml`) and the user's own modules named in `imports:` (`plugins`).
The first stage of a run: it imports no other stage (tests/test_import_layers.py).

Kept free of imports so that `grpokit.config.profiles` and `grpokit.config.run_config`,
which name each other, load in either order.
"""
