"""Each live rule's `reads` is what it reads: every metric its check looks at, over every recorded run,
is declared (a `<name>` stands for any reward or judge), or belongs to a Signals quantity it declares."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grpokit.config.health_section import HealthConfig
from grpokit.health.history import History
from grpokit.health.logs import is_held_out_log, is_train_log
from grpokit.health.rule import RunFacts
from grpokit.health.signals import Signals
from grpokit.health.table import STEP_RULES

HERE = Path(__file__).parent
READ: set[str] = set()


class _Seen(dict):
    def __getitem__(self, key):
        READ.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        READ.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        READ.add(key)
        return super().__contains__(key)


class _Recording(History):
    def now(self, key):
        READ.add(key)
        return super().now(key)

    def last(self, key, n):
        READ.add(key)
        return super().last(key, n)

    def newest_first(self, key):
        READ.add(key)
        return super().newest_first(key)

    def before_now(self, key, n=3):
        READ.add(key)
        return super().before_now(key, n)

    def recent(self, n):
        return [_Seen(logs) for logs in super().recent(n)]


def _histories():
    for case in sorted((HERE / "fixtures").iterdir()):
        if (case / "metrics.jsonl").is_file():
            yield [json.loads(line) for line in (case / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    yield from json.loads((HERE / "snapshots" / "synthetic_inputs.json").read_text(encoding="utf-8")).values()


def _allowed(rule) -> list[re.Pattern]:
    names = [*rule.reads, *(key for signal in rule.reads for key in Signals.READS.get(signal, ()))]
    return [re.compile(re.escape(name).replace(re.escape("<name>"), "[^/]+") + "$") for name in names]


@pytest.mark.parametrize("rule_id", list(STEP_RULES))
def test_a_rule_reads_only_what_it_declares(rule_id):
    rule, config = STEP_RULES[rule_id], HealthConfig(max_completion_length=128)
    params, facts, seen = config.params(rule_id), RunFacts(128, None), set()
    for records in _histories():
        history = _Recording(maxlen=32, first=5)
        for record in records:
            if is_held_out_log(record):
                history.add_held_out(record)
            if not is_train_log(record):
                continue
            history.add(record)
            history.latest, history.first = _Seen(history.latest), _Seen(history.first)
            READ.clear()
            rule.check(Signals(history), params, facts)
            seen |= READ
    allowed = _allowed(rule)
    assert {key for key in seen if not any(p.match(key) for p in allowed)} == set(), rule_id
