"""The health engine's findings over every recorded run must not move unless on purpose.

tests/health/engine_snapshot.py says what is compared and how to regenerate the golden file;
a change shows as the first case and field that differ.
"""
from __future__ import annotations

import json

import pytest

from tests.health.engine_snapshot import GOLDEN, snapshot

GOLDEN_DATA = json.loads(GOLDEN.read_text(encoding="utf-8"))
NOW = snapshot()


@pytest.mark.parametrize("kind,case", [(k, c) for k in ("fixtures", "synthetic") for c in sorted(GOLDEN_DATA[k])])
def test_engine_findings_are_unchanged(kind, case):
    assert json.loads(json.dumps(NOW[kind].get(case))) == GOLDEN_DATA[kind][case]


def test_every_recorded_run_is_in_the_snapshot():
    assert sorted(NOW["fixtures"]) == sorted(GOLDEN_DATA["fixtures"])
    assert len(GOLDEN_DATA["fixtures"]) == 20
    assert sum(len(c["live"]) for c in GOLDEN_DATA["fixtures"].values()) > 10
