"""The health rules as one table: every row a Rule (grpokit.health.rule) over its own parameters
(grpokit.config.health_params), in the order the alerts of one step are raised and the docs list them.

The ids are the parameter classes' (written once); the `health:` section's keys come from the same
classes; symptoms.py, the docs and the report read the words from here.
"""
from __future__ import annotations

from grpokit.config.health_params import PARAMS
from grpokit.health.checks import (after_run, divergence, judge, length, progress, resources, rewards, run_end,
                                   signal, tools)
from grpokit.health.rule import Rule

_DECLARED = {rule.id: rule for family in (signal, length, divergence, progress, rewards, resources, tools, judge,
                                                         after_run, run_end)
             for rule in family.RULES}
assert set(_DECLARED) == set(PARAMS), "every parameter class needs a rule and every rule its parameters"

TABLE: tuple[Rule, ...] = tuple(_DECLARED[rule_id] for rule_id in PARAMS)
BY_ID: dict[str, Rule] = {rule.id: rule for rule in TABLE}
# The rules the monitor runs on every logged step; the others read the finished run only.
STEP_RULES: dict[str, Rule] = {rule.id: rule for rule in TABLE if rule.check is not None}
for _rule in TABLE:
    assert set(_rule.explains) <= set(BY_ID), f"{_rule.id} explains an unknown rule"
