"""report.html: one self-contained page (PNG inlined as base64, CSS inline, no scripts).

Everything that comes from the run (prompts, completions, messages) is escaped:
completions are model output and may contain any HTML.
"""
from __future__ import annotations

import base64
import html
import json
import time
from typing import Any

from grpokit.completions import prompt_text, to_text
from grpokit.health.diagnose import Finding, RunData, explain_loss, measured_text, where_text
from grpokit.health.rules import finite
from grpokit.health.stand_downs import StandDown
from grpokit.health.symptoms import SYMPTOMS

MAX_TEXT = 1500      # characters of a prompt/completion shown; the rest is in completions.jsonl
MAX_SAMPLES = 40     # newest sampled completions shown

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1240px;color:#222;
 padding:0 16px;line-height:1.4}
h1{margin-bottom:4px}h2{margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#666}
.badge{display:inline-block;padding:2px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.critical{background:#c62828}.warning{background:#ef8f00}.info{background:#1e6fb8}.ok{background:#2e7d32}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border:1px solid #e2e2e2;padding:5px 7px;vertical-align:top;text-align:left}
th{background:#f6f6f6}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:12px;max-height:260px;overflow:auto}
img{max-width:100%;border:1px solid #eee}
.finding{border-left:4px solid #999;padding:6px 12px;margin:10px 0;background:#fafafa}
.finding.critical{border-color:#c62828;background:#fdf1f1}.finding.warning{border-color:#ef8f00;background:#fff8ec}
.finding.info{border-color:#1e6fb8;background:#f1f6fc}
.finding p{margin:3px 0}.num{text-align:right;font-variant-numeric:tabular-nums}
"""


def e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n... ({len(text) - MAX_TEXT} more characters)"


def _num(value: Any) -> str:
    number = finite(value)
    if number is None:
        return "" if value is None else e(value)
    return f"{number:.4g}"


def _header(run: RunData, findings: list[Finding]) -> str:
    train = run.train_metrics
    last = train[-1].get("step", len(train)) if train else None
    if train and isinstance(train[-1].get("stage"), str):
        last = f"{last} (stage {train[-1]['stage']})"
    name = run.config.get("name") or run.run_dir.name
    status = _state(run)
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("critical", "warning")}
    badges = "".join(f'<span class="badge {s}">{n} {s}</span> ' for s, n in counts.items() if n)
    badges = badges or '<span class="badge ok">no problems found</span>'
    skipped = (f" &middot; {run.skipped_lines} unreadable line(s) skipped (a run still writing leaves a "
               "partial last line)") if run.skipped_lines else ""
    return (f"<h1>grpokit report: {e(name)}</h1>"
            f'<p class="meta">{e(run.run_dir)} &middot; {len(train)} logged steps, last step {e(last)} '
            f"&middot; {status} &middot; generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}"
            f"{skipped}</p><p>{badges}</p>")


def _state(run: RunData) -> str:
    """finished / running / stopped, from the stages' done markers and run_status.json."""
    from grpokit.health.run_status import process_alive, read_status
    from grpokit.run_directory.progress import stage_names

    names = [n for n in stage_names(run.config) if n]
    if run.finished:
        return f"finished (all {len(names)} stages)" if len(names) > 1 else "finished"
    status = read_status(run.run_dir) or {}
    where = f"stage {status['stage']} " if isinstance(status.get("stage"), str) else ""
    if status.get("state") == "running" and process_alive(status.get("pid"), status.get("host")):
        return f"running ({where}step {status.get('step')})"
    if status.get("state") in ("failed", "interrupted", "running"):
        return f"not finished: stopped at {where}step {status.get('step')} (see the diagnosis)"
    return "not finished (no run_status.json: still running, or stopped before max_steps)"


def _findings(findings: list[Finding]) -> str:
    if not findings:
        return "<h2>Diagnosis</h2><p>No problems found in the metrics.</p>"
    parts = ["<h2>Diagnosis</h2>"]
    for f in findings:
        where = where_text(f)
        steps = f" &middot; {e(where)}" if where else ""
        parts.append(
            f'<div class="finding {e(f.severity)}"><p><span class="badge {e(f.severity)}">{e(f.severity)}</span> '
            f"<b>{e(f.title)}</b> <code>{e(f.rule)}</code>{steps}</p>"
            f"<p><b>Seen:</b> {e(f.evidence)}</p>{_evidence(f)}<p><b>Why:</b> {e(f.cause)}</p>"
            f"<p><b>Fix:</b> {e(f.fix)}</p></div>")
    return "".join(parts)


def _evidence(f: Finding) -> str:
    """The number against its threshold, and where the rule stood down (and why) between its alerts."""
    out = f"<p><b>Measured:</b> {e(measured_text(f))}</p>" if measured_text(f) else ""
    for s in f.stood_down:
        down = StandDown(**s)
        out += f"<p><b>Stood down</b> ({e(down.where())}): {e(down.reason)}: {e(down.detail)}</p>"
    return out


def _stood_down(stood_down: list[StandDown]) -> str:
    """The rules that raised nothing although part of their condition held: what they saw, why they stayed quiet."""
    if not stood_down:
        return ""
    rows = "".join(f"<tr><td><code>{e(s.rule)}</code></td><td>{e(s.where())}</td><td>{e(s.reason)}</td>"
                   f"<td>{e(s.detail)}</td></tr>" for s in stood_down)
    return ("<h2>Rules that stood down</h2><p class=\"meta\">Part of each rule's condition held at these steps, and "
            "the rule stayed quiet for the reason given (another finding explains it, or the numbers say the run is "
            "fine).</p><table><tr><th>rule</th><th>where</th><th>why it stood down</th><th>what it saw</th></tr>"
            f"{rows}</table>")


def _curves(png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return ("<h2>Curves</h2><p class=\"meta\">Green bands: the healthy range from this run's health thresholds. "
            "Red dotted lines: steps where an alert fired or the diagnosis first saw a problem. Grey dashed lines: "
            "where a stage began (each stage counts its own steps; the axis runs on across them).</p>"
            f'<img alt="training curves" src="data:image/png;base64,{data}">')


def _alerts(alerts: list[dict[str, Any]]) -> str:
    if not alerts:
        return "<h2>Alerts</h2><p>No live alerts were raised (alerts.jsonl is empty or absent).</p>"
    staged = any(isinstance(a.get("stage"), str) for a in alerts)
    rows = "".join(
        f"<tr>{'<td>' + e(a.get('stage') or '') + '</td>' if staged else ''}"
        f"<td class=\"num\">{e(a.get('step', ''))}</td><td><span class=\"badge {e(a.get('severity', 'info'))}\">"
        f"{e(a.get('severity', ''))}</span></td><td><code>{e(a.get('rule', ''))}</code></td>"
        f"<td>{e(a.get('message', ''))}</td><td>{e(a.get('fix', ''))}</td></tr>"
        for a in alerts)
    head = "<th>stage</th>" if staged else ""
    return (f"<h2>Alerts</h2><table><tr>{head}<th>step</th><th>severity</th><th>rule</th><th>message</th><th>fix</th></tr>"
            f"{rows}</table>")


def _scores(sample: dict[str, Any]) -> dict[str, Any]:
    # Accept {"rewards": {name: score}} or flat numeric columns next to the text.
    scores: dict[str, Any] = {}
    for key in ("rewards", "scores"):
        if isinstance(sample.get(key), dict):
            scores.update(sample[key])
    for key, value in sample.items():
        if key in ("step", "stage", "time", "rewards", "scores", "prompt", "completion", "answer"):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            scores[key] = value
        elif value is None and key == "reward":
            scores[key] = value  # the total is None when a reward could not score the sample
    return scores


def _completions(samples: list[dict[str, Any]]) -> str:
    if not samples:
        return "<h2>Sampled completions</h2><p>No completions.jsonl yet.</p>"
    shown = samples[-MAX_SAMPLES:]
    rows = []
    for s in reversed(shown):  # newest first: what the model does now matters most
        scores = _scores(s)
        score_html = "<br>".join(f"{e(k)}: <b>{_num(v) if v is not None else 'None'}</b>" for k, v in scores.items())
        answer = f"<br><span class=\"meta\">gold: {e(_clip(str(s['answer'])))}</span>" if s.get("answer") else ""
        rows.append(
            f"<tr><td class=\"num\">{e(s.get('step', ''))}</td><td><pre>{e(_clip(prompt_text(s.get('prompt', ''))))}</pre>"
            f"{answer}</td><td><pre>{e(_clip(to_text(s.get('completion', ''))))}</pre></td><td>{score_html}</td></tr>")
    more = f" (newest {len(shown)} of {len(samples)})" if len(samples) > len(shown) else ""
    return (f"<h2>Sampled completions{more}</h2><table><tr><th>step</th><th>prompt</th><th>completion</th>"
            f"<th>scores</th></tr>{''.join(rows)}</table>")


def _eval(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, dict):
        tables = {k: v for k, v in data.items() if isinstance(v, dict)}
        if tables:
            keys = []
            for table in tables.values():
                keys += [k for k in table if k not in keys]
            head = "".join(f"<th>{e(name)}</th>" for name in tables)
            rows = "".join(f"<tr><td>{e(k)}</td>"
                           + "".join(f"<td class=\"num\">{_num(t.get(k))}</td>" for t in tables.values()) + "</tr>"
                           for k in keys)
            rest = {k: v for k, v in data.items() if k not in tables}
            extra = f"<pre>{e(json.dumps(rest, indent=2, default=str))}</pre>" if rest else ""
            return f"<h2>Evaluation (eval.json)</h2><table><tr><th>metric</th>{head}</tr>{rows}</table>{extra}"
    return f"<h2>Evaluation (eval.json)</h2><pre>{e(json.dumps(data, indent=2, default=str))}</pre>"


def _loss_and_table(run: RunData) -> str:
    training = run.config.get("training") if isinstance(run.config.get("training"), dict) else {}
    beta = finite(training.get("beta")) or 0.0
    iters = int(finite(training.get("num_iterations")) or 1)
    explanation = "".join(f"<p>{e(p)}</p>" for p in explain_loss(beta=beta, num_iterations=iters).split("\n\n"))
    rows = "".join(f"<tr><td><code>{e(s.rule)}</code></td><td>{e(s.title)}</td><td>{e(s.looks_like)}</td>"
                   f"<td>{e(s.cause)}</td><td>{e(s.fix)}</td></tr>" for s in SYMPTOMS)
    return ("<h2>About the loss</h2>" + explanation
            + "<h2>Symptom, cause, fix</h2><table><tr><th>rule</th><th>symptom</th><th>looks like</th><th>cause</th>"
            f"<th>fix</th></tr>{rows}</table>")


def render_html(run: RunData, findings: list[Finding], png: bytes, stood_down: list[StandDown] | None = None) -> str:
    body = "".join([
        _header(run, findings), _findings(findings), _stood_down(stood_down or []), _curves(png), _alerts(run.alerts),
        _eval(run.eval), _completions(run.completions), _loss_and_table(run),
    ])
    title = e(run.config.get("name") or run.run_dir.name)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>grpokit report: {title}</title>"
            f"<style>{CSS}</style></head><body>{body}</body></html>\n")
