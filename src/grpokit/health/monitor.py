"""The health engine: every rule of the table run the same way on each logged step.

Each rule's check says whether its condition holds now, with the number against its threshold
(an Evidence). The engine adds what is the same for every rule: patience (k steps in a row),
explanation (a holding cause hides the findings it explains, so one failure raises one alert),
hysteresis and de-duplication (an alert fires when a condition starts, not every step), and the
record of every stand-down, so the report can say why a rule stayed quiet.
"""
from __future__ import annotations

from typing import Any

from grpokit.config.health_section import HealthConfig
from grpokit.health.alert import Alert
from grpokit.health.evidence import Evidence
from grpokit.health.fixes import fix_for
from grpokit.health.history import History, finite
from grpokit.health.logs import is_held_out_log, is_train_log
from grpokit.health.rule import RunFacts
from grpokit.health.signals import Signals
from grpokit.health.table import STEP_RULES as BY_ID


class HealthMonitor:
    """Feed it each logged step; it returns the alerts that start (or repeat) at that step."""

    def __init__(self, config: HealthConfig | None = None):
        self.config = config or HealthConfig()
        c = self.config
        self._params = {rule_id: c.params(rule_id) for rule_id in BY_ID}
        self.history = History(maxlen=max(8, *(p.history_steps() for p in self._params.values())),
                               first=self._params["reward_stuck"].baseline_steps)
        self._streak: dict[str, int] = {r: 0 for r in BY_ID}
        self._firing_since: dict[str, int] = {}   # rule -> logged-step index of its last alert
        self._clear: dict[str, int] = {r: 0 for r in BY_ID}  # logged steps in a row a rule has been clear
        self._index = 0
        self.alerts: list[Alert] = []
        # rule -> (logged-step index, step) of every step its alert held (confirmed, repeated or not):
        # the diagnosis lists each range, not only the step the alert first fired.
        self.firing: dict[str, list[tuple[int, int]]] = {}
        # rule -> reason -> {"detail": the first step's words, "ranges": [[first index, first step, last index,
        # last step], ...]}: where part of a rule's condition held and something kept it quiet.
        self.stood_down: dict[str, dict[str, dict[str, Any]]] = {}
        self._rules = {r: rule for r, rule in BY_ID.items() if r not in c.disable and self._params[r].enabled}

    @property
    def facts(self) -> RunFacts:
        return RunFacts(self.config.max_completion_length, self.config.expected_logged_steps,
                        self.config.completions_per_step)

    def state(self) -> dict[str, Any]:
        """The monitor as JSON-able data: its history (baselines, recent values), each rule's streak
        (patience), hysteresis and de-duplication counters, the alerts raised. `restore` of it, then the same
        logs, raises the same alerts as one monitor fed every log: a resumed run is watched as a straight one."""
        return {"history": self.history.state(), "streak": self._streak, "firing_since": self._firing_since,
                "clear": self._clear, "index": self._index, "alerts": [a.to_dict() for a in self.alerts],
                "firing": {rule: [list(p) for p in pairs] for rule, pairs in self.firing.items()},
                "stood_down": self.stood_down}

    def restore(self, state: dict[str, Any]) -> None:
        self.history.restore(state["history"])
        # Rules added since the state was saved start clear; rules since removed are dropped.
        self._streak.update({r: int(n) for r, n in state["streak"].items() if r in self._streak})
        self._clear.update({r: int(n) for r, n in state["clear"].items() if r in self._clear})
        self._firing_since = {r: int(n) for r, n in state["firing_since"].items() if r in BY_ID}
        self._index = int(state["index"])
        self.alerts = [Alert(**a) for a in state["alerts"] if a.get("rule") in BY_ID]
        self.firing = {r: [(int(i), int(s)) for i, s in pairs] for r, pairs in state["firing"].items() if r in BY_ID}
        self.stood_down = {r: reasons for r, reasons in state.get("stood_down", {}).items() if r in BY_ID}

    def observe(self, step: int, logs: dict[str, Any]) -> list[Alert]:
        """Add one log record (TRL metric names); return new alerts. A held-out evaluation record
        (grpokit.evaluate.during) is kept for the rules that weigh it and raises nothing itself; other
        eval and summary logs are skipped."""
        if not self.config.enabled:
            return []
        if not is_train_log(logs):
            # A held-out record is never a training log: asked second, a training log is read once, not thrice.
            if is_held_out_log(logs):
                self.history.add_held_out(dict(logs))
            return []
        self._index += 1
        self.history.add(logs)
        signals, facts = Signals(self.history), self.facts
        readings = {r: rule.check(signals, self._params[r], facts) for r, rule in self._rules.items()}
        # Explanation looks at raw conditions, not patience, so a slow-to-confirm cause still hides a
        # fast-to-confirm symptom.
        hides = {r: BY_ID[r].explains if ev.explains is None else ev.explains for r, ev in readings.items() if ev.holds}
        new: list[Alert] = []
        for rule, ev in readings.items():
            new += self._advance(rule, ev, readings, hides, int(step), logs, facts)
        self.alerts.extend(new)
        return new

    def _advance(self, rule: str, ev: Evidence, readings: dict[str, Evidence], hides: dict[str, tuple[str, ...]],
                 step: int, logs: dict[str, Any], facts: RunFacts) -> list[Alert]:
        """One rule's streak, hysteresis and alert at this step."""
        holds = ev.holds
        causes = [cause for cause, hidden in hides.items() if rule in hidden and cause not in ev.not_explained_by]
        if holds and causes:
            holds = False
            self._stand_down(rule, f"explained by {causes[0]}", readings[causes[0]].message, step)
        for reason, detail in ev.stood_down_for:
            self._stand_down(rule, reason, detail, step)
        message = ev.message
        for other, words in ev.tells:
            if other in readings and readings[other].holds:
                message = f"{message}{words}{readings[other].message}"
        self._streak[rule] = self._streak[rule] + 1 if holds else 0
        self._clear[rule] = 0 if holds else self._clear[rule] + 1
        if self._clear[rule] >= self.config.clear_steps:
            # Hysteresis: a noisy metric hovering at a threshold raises one alert, not one per crossing.
            self._firing_since.pop(rule, None)
        need = facts.capped(self._params[rule].patience if ev.patience is None else ev.patience)
        if self._streak[rule] < need:
            return []
        self.firing.setdefault(rule, []).append((self._index, step))
        since = self._firing_since.get(rule)
        if since is not None and self._index - since < self.config.realert_steps:
            return []
        self._firing_since[rule] = self._index
        declared = BY_ID[rule]
        if need > 1:
            message = f"{message}, {self._streak[rule]} logged steps in a row"
        return [Alert(step=step, rule=rule, severity=declared.severity, message=f"{declared.title}: {message}",
                      fix=fix_for(rule, logs=logs), value=ev.value, threshold=ev.threshold)]

    def _stand_down(self, rule: str, reason: str, detail: str, step: int) -> None:
        entry = self.stood_down.setdefault(rule, {}).setdefault(reason, {"detail": detail, "ranges": []})
        ranges = entry["ranges"]
        if ranges and ranges[-1][2] == self._index - 1:
            ranges[-1][2:] = [self._index, step]
        else:
            ranges.append([self._index, step, self._index, step])


def replay_monitor(records: list[dict[str, Any]], config: HealthConfig | None = None) -> HealthMonitor:
    """The monitor after running the rules over a whole metric history (log dicts with a `step`), held-out
    evaluation records included where they were written."""
    monitor = HealthMonitor(config)
    for i, record in enumerate(records, start=1):
        step = finite(record.get("step"))
        monitor.observe(int(step) if step is not None else i, record)
    return monitor


def replay(records: list[dict[str, Any]], config: HealthConfig | None = None) -> list[Alert]:
    """Run the rules over a whole metric history (a list of log dicts with a `step`)."""
    return replay_monitor(records, config).alerts


def step_ranges(firing: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(first step, last step) of each run of consecutive logged steps in `firing` ((index, step) pairs)."""
    ranges: list[tuple[int, int]] = []
    last_index = None
    for index, step in firing:
        if ranges and last_index is not None and index == last_index + 1:
            ranges[-1] = (ranges[-1][0], step)
        else:
            ranges.append((step, step))
        last_index = index
    return ranges
