"""The memory limit a run dies at, the out_of_memory rule, and the doctor's prediction under `ulimit -v`."""
from __future__ import annotations

import json
import subprocess
import sys

from grpokit.health.doctor_checks import check_memory
from grpokit.health.memory import GIB, memory_limit, memory_metrics
from grpokit.health.rules import replay

# Run in a child: RLIMIT_AS cannot be raised again once lowered, and it must not bind this test process.
UNDER_CAP = """
import json, resource
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from grpokit.health.doctor_checks import available_memory
from grpokit.health.memory import memory_limit
m = memory_limit()
available, where = available_memory(False)
print(json.dumps({{"kind": m.kind, "limit": m.limit, "used": m.used, "available": available, "where": where}}))
"""


def _under_cap(gib: float) -> dict:
    out = subprocess.run([sys.executable, "-c", UNDER_CAP.format(cap=int(gib * GIB))], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_address_space_cap_is_the_limit_that_binds():
    seen = _under_cap(4.0)
    assert seen["kind"] == "address space" and seen["limit"] == 4.0 * GIB
    # The doctor leaves out what the process already maps but does not hold (libraries): less than the cap.
    assert 0 < seen["available"] < 4.0 * GIB and "ulimit -v" in seen["where"]


def test_doctor_fails_a_plan_over_the_cap():
    seen = _under_cap(3.0)
    parts = {"weights": 0.5 * GIB, "gradients": 0.5 * GIB, "optimizer": 1.0 * GIB, "activations": 1.5 * GIB,
             "trainable_params": 1.35e8}
    parts["total"] = sum(v for k, v in parts.items() if k != "trainable_params")
    (check,) = check_memory(parts, seen["available"], seen["where"])
    assert check.status == "fail" and "ulimit -v" in check.detail and "LoRA" in check.fix


def test_without_a_cap_the_limit_is_ram_or_a_cgroup():
    m = memory_limit()
    assert m is not None and m.kind in ("RAM", "cgroup", "address space") and 0 < m.used < m.limit
    metrics = memory_metrics()
    assert 0 < metrics["memory/peak_gib"] <= metrics["memory/limit_gib"]


def test_out_of_memory_rule_fires_at_ninety_percent_of_the_limit():
    records = [{"step": i, "loss": 0.0, "reward": 0.5, "reward_std": 0.5, "memory/limit_gib": 16.0,
                "memory/peak_gib": 12.0 + i} for i in range(1, 5)]
    alerts = replay(records)
    assert [(a.rule, a.step, a.severity) for a in alerts] == [("out_of_memory", 3, "critical")]
    assert "15.00 GiB of its 16.00 GiB limit" in alerts[0].message


def test_the_cgroup_files_are_found_once_per_process(monkeypatch):
    # memory_metrics runs at every training log; where the cgroup's files are does not change in a run.
    import builtins
    from pathlib import Path

    from grpokit.health import memory

    reads = []
    read_text = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: reads.append(str(self)) or read_text(self, *a, **k))
    memory._cgroup_files.cache_clear()
    opened = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    first = [memory.memory_metrics() for _ in range(3)]
    memory._cgroup_files.cache_clear()
    assert reads.count("/proc/self/cgroup") == 1
    assert opened.count("/proc/meminfo") <= 1 and opened.count("/proc/self/status") == 3
    assert first[0].keys() == first[2].keys()
