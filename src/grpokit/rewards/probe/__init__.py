"""Probe rewards for exploits before training: `probe_rewards(funcs, rows, weights)`.

A battery of adversarial completions (battery.py) is built from the data set's
own rows (rows.py) and scored with every reward and their weighted total
(run.py). An exploit must not score above its ceiling: by default no more than
the same row's well-formed wrong answer, and never more than its honest correct
answer. Torch-free, like the rest of grpokit.rewards.

    from grpokit.rewards.probe import probe_rewards
    report = probe_rewards(funcs, rows, weights)
    for exploit in report.worst(): print(exploit)
"""
from grpokit.rewards.probe.battery import BATTERY, PROBES, Attack, Probe  # noqa: F401
from grpokit.rewards.probe.run import TOTAL, Exploit, ProbeReport, ceiling, probe_rewards  # noqa: F401
