"""The health rules' public names, where callers have always imported them from.

The rules are rows of one table (table.py; each family's checks and words in checks/), their
parameters the config's (grpokit.config.health_params), and one engine runs them (monitor.py).
Pure Python (no torch, no transformers): cheap on every step, and replayed over a finished run's
metrics.jsonl by diagnose.py.
"""
from grpokit.config.health_section import HealthConfig
from grpokit.health.alert import Alert
from grpokit.health.history import History, finite
from grpokit.health.logs import expected_logged_steps, is_held_out_log, is_train_log
from grpokit.health.monitor import HealthMonitor, replay, replay_monitor, step_ranges

__all__ = ["Alert", "HealthConfig", "HealthMonitor", "History", "expected_logged_steps", "finite",
           "is_held_out_log", "is_train_log", "replay", "replay_monitor", "step_ranges"]
