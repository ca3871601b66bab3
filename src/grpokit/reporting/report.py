"""The run report: curves.png and a self-contained report.html for a run directory.

    paths = write_report("runs/math-demo")   # -> {"png": ..., "html": ...}

Works on a run still in progress (a partial last metrics line is skipped).
The healthy band on each panel comes from the run's own health thresholds, so
the picture and the alerts agree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grpokit.health.diagnose import RunData, diagnosis, health_config_for, load_run
from grpokit.health.rules import HealthConfig, finite
from grpokit.run_directory import layout

GOOD = "#2ca02c"
BAD = "#d62728"


@dataclass
class Panel:
    title: str
    keys: list[str]                   # metrics drawn as lines
    band: tuple[float, float] | None  # the healthy range (y), shaded green
    note: str = ""                    # what a healthy curve looks like, printed under the title
    rules: tuple[str, ...] = ()       # alerts of these rules are marked on this panel
    from_zero: bool = False           # y axis starts at 0 (a flat line must not look jagged)


def reward_names(records: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for record in records:
        for key in record:
            if key.startswith("rewards/") and key.endswith("/mean"):
                name = key[len("rewards/"):-len("/mean")]
                if name not in names:
                    names.append(name)
    return names


def x_positions(records: list[dict[str, Any]]) -> list[float]:
    """The x of each record: its step, continued across stages (each stage's trainer counts from 0)."""
    xs, offset, stage = [], 0.0, None
    for i, record in enumerate(records, start=1):
        step = finite(record.get("step"))
        step = step if step is not None else float(i)
        if record.get("stage") != stage and xs:
            offset = xs[-1] - step + 1 if step + offset <= xs[-1] else offset
        stage = record.get("stage")
        xs.append(step + offset)
    return xs


def stage_starts(records: list[dict[str, Any]]) -> list[tuple[float, str]]:
    """(x where it begins, name) of every stage, on the x_positions axis; empty for a run without stages."""
    out: list[tuple[float, str]] = []
    for x, record in zip(x_positions(records), records):
        stage = record.get("stage")
        if isinstance(stage, str) and (not out or out[-1][1] != stage):
            out.append((x - 0.5, stage))
    return out


def stage_x(records: list[dict[str, Any]]) -> dict[tuple[str | None, int], float]:
    """(stage, step) -> x on the x_positions axis, so an alert of stage two's step 2 is drawn in stage two."""
    out: dict[tuple[str | None, int], float] = {}
    for x, record in zip(x_positions(records), records):
        step = finite(record.get("step"))
        stage = record.get("stage") if isinstance(record.get("stage"), str) else None
        if step is not None:
            out.setdefault((stage, int(step)), x)
    return out


def series(records: list[dict[str, Any]], key: str) -> tuple[list[float], list[float]]:
    """(steps, values) with NaN where the value is missing or not finite, so lines break there."""
    steps, values = [], []
    for x, record in zip(x_positions(records), records):
        if key not in record:
            continue
        value = finite(record.get(key))
        steps.append(x)
        values.append(value if value is not None else math.nan)
    return steps, values


def panels(records: list[dict[str, Any]], hc: HealthConfig) -> list[Panel]:
    limit = hc.max_completion_length
    signal, truncation, kl = hc.params("no_learning_signal"), hc.params("truncation"), hc.params("kl_blowup")
    judge = hc.params("judge_slow")
    entropy_start = [v for v in series(records, "entropy")[1] if not math.isnan(v)][:3]
    entropy_floor = hc.params("collapse").entropy_drop * sorted(entropy_start)[len(entropy_start) // 2] if entropy_start else None
    chosen = [
        Panel("reward", ["reward"], None, "should rise", ("reward_stuck",)),
        Panel("reward per function (mean)", [f"rewards/{n}/mean" for n in reward_names(records)], None,
              "each should rise or stay high", ("reward_unscorable",)),
        Panel("reward_std", ["reward_std"], (signal.min_reward_std, math.inf), f"keep above {signal.min_reward_std}",
              ("no_learning_signal",)),
        Panel("frac_reward_zero_std", ["frac_reward_zero_std"], (0.0, signal.zero_std_frac),
              f"keep below {signal.zero_std_frac}", ("no_learning_signal",)),
        Panel("completion length", ["completions/mean_length", "completions/max_length"],
              (0.0, hc.params("length_drift").limit_frac * limit) if limit else None,
              f"limit {limit}" if limit else "", ("length_drift", "truncation")),
        Panel("completions/clipped_ratio", ["completions/clipped_ratio"], (0.0, truncation.clipped_ratio),
              f"keep below {truncation.clipped_ratio}", ("truncation",)),
        Panel("kl", ["kl"], (0.0, kl.kl_max), f"keep below {kl.kl_max} (logged when beta > 0)", ("kl_blowup",)),
        Panel("entropy", ["entropy"], (entropy_floor, math.inf) if entropy_floor else None,
              "a slow fall is fine; a crash is collapse", ("collapse",)),
        Panel("loss", ["loss"], None, "hovers near 0; rising is normal", ("non_finite",)),
        Panel("grad_norm", ["grad_norm"], None, "finite, no spikes", ("non_finite",)),
    ]
    # Held-out accuracy during training (eval: every N steps): what the run is for, drawn when logged.
    held_out = [k for k in ("eval/accuracy", "eval/reward") if any(k in r for r in records)]
    if held_out:
        chosen.insert(0, Panel("held-out accuracy", held_out[:1] if "eval/accuracy" in held_out
                               else held_out, None, "unseen prompts; should rise",
                               from_zero=True))
    if any("completions/cut_answer_gap" in r for r in records):
        # Beside the share cut: whether the cut costs the answer (below 0) or is paid for (above 0).
        at = next(i for i, p in enumerate(chosen) if p.title == "completions/clipped_ratio") + 1
        chosen.insert(at, Panel("cut minus finished completions, answer rewards (completions/cut_answer_gap)",
                                ["completions/cut_answer_gap"], None,
                                "near 0: the cut leaves the answer; below: it costs it; above: the reward pays "
                                "for length", ("truncation", "length_drift")))
    # Runs logged before these metrics existed do not get two empty panels.
    if any("step_time" in r for r in records):
        chosen.append(Panel("seconds per step", ["step_time"], None, "flat; a climb is swapping or a leak",
                            from_zero=True))
    # Tool runs (tools:): TRL's tool metrics and the turn-limit diagnostic.
    tool_keys = ["tools/call_frequency", "tools/failure_frequency", "rewards/tool_turn_limit/mean",
                 "tools/time_share"]
    if any("tools/call_frequency" in r for r in records):
        chosen.append(Panel("tool use (calls per episode; shares of calls and step time)", tool_keys, None,
                            "calls above 0; failures and turn-limit share low",
                            ("tool_calls_fail", "tool_never_called", "tool_turn_limit"), from_zero=True))
    judges = list(dict.fromkeys(k.split("/")[1] for r in records for k in r
                                if k.startswith("judge/") and k.endswith("/latency_s")))
    if judges:  # llm_judge: what each step waited for the judge, and what share of the step that was
        chosen.append(Panel("judge latency per step (s)", [f"judge/{n}/{m}" for n in judges
                                                           for m in ("latency_s", "latency_max_s")], None,
                            f"median and slowest request; alert at {judge.max_latency_s:g}s", ("judge_slow",),
                            from_zero=True))
        chosen.append(Panel("judge share of step time; unscored share",
                            [f"judge/{n}/{m}" for n in judges for m in ("step_share", "failure_frac")],
                            (0.0, judge.step_share), f"keep below {judge.step_share}; failures near 0",
                            ("judge_slow", "judge_failing"), from_zero=True))
    memory = ["memory/rss_gb", "memory/cuda_allocated_gb"]
    if any(k in r for r in records for k in memory):
        chosen.append(Panel("memory (GB)", memory, None, "flat after the first steps; a steady climb ends in OOM",
                            from_zero=True))
    return chosen


def plot_curves(run: RunData, path: str | Path, hc: HealthConfig | None = None,
                findings: list | None = None) -> Path:
    """Draw the curves; returns the PNG path. Uses the Agg backend: no display needed.

    Steps where an alert fired live (alerts.jsonl) or where the diagnosis first saw a
    problem (findings) are marked on the panels of the metrics that rule reads.
    """
    import matplotlib.pyplot as plt

    fig = curves_figure(run, hc, findings)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


# Characters of a panel title per line at its font size: a left-aligned title longer than its panel ran on
# over the next panel's title.
TITLE_CHARS = 62


def curves_figure(run: RunData, hc: HealthConfig | None = None, findings: list | None = None):
    """The curves as a matplotlib figure (the caller closes it): plot_curves's drawing."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    records = run.curve_metrics
    hc = hc or health_config_for(run.config, run.train_metrics)
    where = stage_x(records)
    alerts = _alert_steps(run, where)
    for f in findings or []:
        if f.first_step is not None:
            alerts.setdefault(f.rule, []).append(where.get((f.first_stage, int(f.first_step)), float(f.first_step)))
    starts = stage_starts(records)
    chosen = panels(records, hc)
    cols = 2
    rows = math.ceil(len(chosen) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(12, 3.0 * rows), squeeze=False)
    xs = x_positions(records)
    for ax, panel in zip(axes.flat, chosen):
        _draw_panel(ax, panel, records, alerts)
        for i, (x, name) in enumerate(starts):
            if i:  # the first stage begins where the axis does
                ax.axvline(x, color="gray", ls="--", lw=1)
            ax.text(x, 1.0, f" {name}", transform=ax.get_xaxis_transform(), fontsize=7, color="gray",
                    va="top", ha="left")
        if len(xs) > 1:
            ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)  # one step axis for all panels, even where values are NaN
    for ax in list(axes.flat)[len(chosen):]:
        ax.set_visible(False)
    fig.tight_layout(h_pad=1.2, w_pad=2.0)
    return fig


def _draw_panel(ax, panel: Panel, records: list[dict[str, Any]], alerts: dict[str, list[float]]) -> None:
    drawn = 0
    all_steps: list[float] = []
    for key in panel.keys:
        steps, values = series(records, key)
        if not steps:
            continue
        all_steps += steps
        label = key.split("/")[1] if key.startswith("rewards/") else key
        # Sparse series (held-out evaluations every N steps) get markers: each point is a measurement.
        ax.plot(steps, values, lw=1.4, label=label, marker="o" if len(values) <= 12 else None, ms=4)
        drawn += 1
        bad = [s for s, v in zip(steps, values) if math.isnan(v)]
        if bad and panel.title in ("loss", "grad_norm"):
            # NaN cannot be drawn as a line: mark the steps where it happened.
            ax.scatter(bad, [0.0] * len(bad), marker="x", color=BAD, zorder=5, label="NaN/inf")
    if panel.band is not None and drawn:
        lo, hi = panel.band
        ymin, ymax = ax.get_ylim()
        # Stretch the axis to show the healthy band's edge, so a flat line outside it reads as outside.
        edges = [v for v in (lo, hi) if math.isfinite(v)]
        if lo > 0 and not math.isfinite(hi):
            edges.append(lo * 1.5)  # an open-ended band still gets some visible height
        ymin, ymax = min([ymin, *edges]), max([ymax, *edges])
        pad = 0.04 * (ymax - ymin or 1.0)
        ymin, ymax = ymin - pad, ymax + pad
        ax.axhspan(max(lo, ymin), min(hi, ymax), color=GOOD, alpha=0.12, lw=0)
        ax.set_ylim(ymin, ymax)
    if panel.from_zero and drawn:
        ax.set_ylim(0, max(ax.get_ylim()[1], 1e-9) * 1.05)
    marked = sorted({s for rule in panel.rules for s in alerts.get(rule, [])})
    for s in marked:
        ax.axvline(s, color=BAD, ls=":", lw=1)
    ax.set_title(panel_title(panel), fontsize=9, loc="left")
    ax.tick_params(labelsize=8)
    if not drawn:
        ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes, color="gray")
    elif len(panel.keys) > 1 or ax.collections:
        ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.2)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole: no 1.5 on a 3-step run


def panel_title(panel: Panel) -> str:
    """The title and its note, wrapped to the panel's width: the note on a line of its own when both do not fit."""
    import textwrap

    title = panel.title + (f"  ({panel.note})" if panel.note else "")
    if len(title) <= TITLE_CHARS:
        return title
    lines = textwrap.wrap(panel.title, TITLE_CHARS)
    if panel.note:
        lines += textwrap.wrap(f"({panel.note})", TITLE_CHARS)
    return "\n".join(lines)


def _alert_steps(run: RunData, where: dict[tuple[str | None, int], float] | None = None) -> dict[str, list[float]]:
    """rule -> x of each live alert (its stage's step on the run's axis)."""
    out: dict[str, list[float]] = {}
    for record in run.alerts:
        step = finite(record.get("step"))
        if step is not None and isinstance(record.get("rule"), str):
            stage = record.get("stage") if isinstance(record.get("stage"), str) else None
            out.setdefault(record["rule"], []).append((where or {}).get((stage, int(step)), float(step)))
    return out


def write_report(run_dir: str | Path, out_dir: str | Path | None = None) -> dict[str, Path]:
    """Write curves.png and report.html into the run directory (or out_dir)."""
    from grpokit.reporting.html import render_html

    run = load_run(run_dir)
    out = Path(out_dir) if out_dir else run.run_dir
    out.mkdir(parents=True, exist_ok=True)
    hc = health_config_for(run.config, run.train_metrics)
    result = diagnosis(run)
    findings = result.findings
    png = plot_curves(run, out / layout.CURVES, hc, findings)
    html = render_html(run, findings, png.read_bytes(), result.stood_down)
    html_path = out / layout.REPORT
    html_path.write_text(html, encoding="utf-8")
    return {"png": png, "html": html_path}
