"""Probe rewards for exploits before training: `probe_rewards(funcs, rows, weights)`.

A battery of adversarial completions (battery.py) is built from the data set's
own rows (rows.py) and scored with every reward and their weighted total
(run.py). An exploit must not score above its ceiling: by default no more than
the same row's well-formed wrong answer, and never more than its honest correct
answer. A stage of its own, after the config: it reads rows of the run's data set
(grpokit.data) and scores the run's rewards (grpokit.rewards) on them, and neither
imports it. Torch-free, like the reward library.

    from grpokit.probe import probe_rewards
    report = probe_rewards(funcs, rows, weights)
    for exploit in report.worst(): print(exploit)
"""
from grpokit.probe.battery import BATTERY, PROBES, Attack, Probe  # noqa: F401
from grpokit.probe.run import TOTAL, Exploit, ProbeReport, ceiling, probe_rewards  # noqa: F401
