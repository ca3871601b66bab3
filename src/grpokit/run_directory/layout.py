"""The files of a run directory, by name. Nothing else in grpokit spells these names."""
from __future__ import annotations

CONFIG = "config.yaml"              # the run config with every training setting resolved
METRICS = "metrics.jsonl"           # one record per logged step (TRL's names + grpokit's)
COMPLETIONS = "completions.jsonl"   # a sample of each scored batch, with every reward's score
ALERTS = "alerts.jsonl"             # live health alerts; empty when watched and nothing was wrong
RUN_STATUS = "run_status.json"      # running/finished/failed/interrupted, pid, step, memory: the post-mortem's source
EVAL = "eval.json"                  # held-out accuracy before/after (grpokit eval, the demo)
DEMO_SUMMARY = "demo_summary.json"  # the demo's before/after numbers
CHECKPOINTS = "checkpoints"         # checkpoint-N/ (STAGE/checkpoint-N/ in a multi-stage run)
FINAL = "final"                     # checkpoints/[STAGE/]final/: the weights (or adapter) a stage ends with
STAGE_DONE = "grpokit_stage_done.json"  # inside final/: the stage finished; written last
CHECKPOINT_DONE = "grpokit_complete.json"  # inside checkpoint-N/: every file written; resume trusts only these
HEALTH_STATE = "grpokit_health.json"  # inside checkpoint-N/: the health monitor's state, restored on resume
CURVES = "curves.png"               # grpokit report
REPORT = "report.html"              # grpokit report

# Every file name above, for the architecture page's drift check.
ALL = (CONFIG, METRICS, COMPLETIONS, ALERTS, RUN_STATUS, EVAL, DEMO_SUMMARY, CHECKPOINTS, FINAL, STAGE_DONE,
       CHECKPOINT_DONE, HEALTH_STATE, CURVES, REPORT)
