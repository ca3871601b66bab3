"""The health zoo: do grpokit's alerts, diagnosis and doctor tell real sick runs from healthy ones?

    python -m benchmarks.health_zoo [--cases a,b] [--jobs 1] [--work DIR] [--rescore]

Trains each case of benchmarks/zoo/cases.py (the bundled model, a few steps, OMP_NUM_THREADS=1,
one `grpokit train` subprocess per case, under an address-space cap where the case sets one),
runs `grpokit doctor` before training where a case says the failure is predictable, and
`grpokit report` after. A case with a judge reward gets the package's local judge server for its
run, killed on the case's cue (benchmarks/zoo/judge.py). Scores per case: which rules fired and at
which step (the rules replayed over metrics.jsonl and the live alerts, as the report does), whether
the diagnosis names the expected cause first, and whether the doctor flagged it. Writes
benchmarks/results/health_zoo.json after every case, so a stopped run keeps what it measured.

`--rescore` scores the run directories already under --work again, without training: after a
rule changes, the same real runs say whether it got better.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import yaml

ROOT = Path(__file__).resolve().parents[1]
# Score with this checkout's rules, not an installed grpokit (the children get the same path in _env()).
sys.path.insert(0, str(ROOT / "src"))

from benchmarks.zoo import heldout, heldout2  # noqa: E402 - after the path set-up above
from benchmarks.zoo.cases import Case, cases as zoo_cases  # noqa: E402
from benchmarks.zoo.judge import LiveJudge, serving  # noqa: E402
from grpokit.integrations.judge_server import MISSING as JUDGE_MISSING, server_available  # noqa: E402
RESULTS = ROOT / "benchmarks" / "results"
CASE_SETS = {"zoo": zoo_cases, "heldout": heldout.cases, "heldout2": heldout2.cases}
GIB = 1024 ** 3


def merge(base: dict, changes: dict) -> dict:
    """`changes` laid over `base`, nested dicts merged key by key; a None value removes the key."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def case_config(case: Case, work: Path, judge_url: str | None = None) -> Path:
    """Write the case's run config (demo recipe + the case's changes, + its judge reward at `judge_url`)
    and return its path."""
    if case.base:
        base = yaml.safe_load(Path(case.base).read_text(encoding="utf-8"))
    else:
        from grpokit.demo import DEMO_YAML

        base = yaml.safe_load(DEMO_YAML)
    raw = merge(base, case.changes)
    if case.judge is not None:
        judge = merge({"name": "llm_judge"}, case.judge)
        judge.setdefault("params", {})["base_url"] = judge_url
        raw["rewards"] = [*raw.get("rewards", []), judge]
    raw["name"] = f"zoo-{case.name}"
    raw["output_dir"] = str(work / case.name / "run")
    training = raw.setdefault("training", {})
    training.update({"max_steps": case.steps, "save_steps": case.steps, "logging_steps": 1})
    # Held-out evaluation doubles a step's cost; the zoo scores the alerts, so only a case that needs it keeps it.
    raw["eval"] = {**raw.get("eval", {}), "every": case.eval_every} if case.eval_every else {"every": 0}
    path = work / case.name / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _cap(gib: float | None):
    """A preexec_fn that sets RLIMIT_AS (what `ulimit -v` sets) in the child, or None."""
    if not gib:
        return None
    limit = int(gib * GIB)

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_cli(args: list[str], *, cap: float | None, timeout: float, log: Path) -> dict[str, Any]:
    """`python -m grpokit ARGS` in a child; its exit code, wall and CPU seconds, and output (kept in `log`)."""
    started = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "grpokit", *args], cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_cap(cap))
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        timed_out = True
    log.write_text(out or "", encoding="utf-8")
    log.with_suffix(".err").write_text(err or "", encoding="utf-8")
    # Progress bars redraw with carriage returns: keep the last state of each line.
    lines = [line.rsplit("\r", 1)[-1] for line in f"{out}\n{err}".splitlines()]
    return {"rc": proc.returncode, "timed_out": timed_out, "wall_s": round(time.time() - started, 1),
            "tail": "\n".join(line for line in lines if line.strip())[-1500:]}


def doctor_prediction(case: Case, config: Path, work: Path) -> dict[str, Any]:
    """`grpokit doctor --json` on the case's config, under the same cap; the checks it warned or failed."""
    log = work / case.name / "doctor.log"
    res = run_cli(["doctor", str(config), "--json"], cap=case.memory_cap_gib, timeout=900, log=log)
    text = log.read_text(encoding="utf-8")
    start = text.find("[\n")
    try:
        checks = json.loads(text[start:]) if start >= 0 else []
    except json.JSONDecodeError:
        checks = []
    flagged = [c for c in checks if c.get("status") in ("warn", "fail")]
    return {"rc": res["rc"], "wall_s": res["wall_s"],
            "flagged": [{"check": f"{c['area']}/{c['name']}", "status": c["status"], "detail": c["detail"][:240]}
                        for c in flagged],
            "error": None if checks else res["tail"][-600:]}


# The doctor checks that speak of each predictable failure (area/name prefixes).
PREDICTED_BY = {
    "out_of_memory": ("memory/",),
    "truncation": ("lengths/answer tokens", "probe/truncation"),
    "no_learning_signal": ("probe/learning signal", "probe/reward"),
    "reward_unscorable": ("probe/reward",),
}


def _predicted(case: Case, doctor: dict[str, Any]) -> bool:
    """Whether the doctor warned (or failed) on a check that speaks of this case's failure."""
    prefixes = PREDICTED_BY.get(case.cause or "", ())
    return any(flag["check"].startswith(prefixes) for flag in doctor.get("flagged", [])) if prefixes else False


def score(case: Case, run_dir: Path) -> dict[str, Any]:
    """Rules fired (first step), the diagnosis' order, and the verdict against the case's expectation."""
    from grpokit.health.diagnose import diagnose, load_run
    from grpokit.health.symptoms import RULES

    run = load_run(run_dir)
    findings = diagnose(run)
    problems = [f for f in findings if f.severity in ("warning", "critical")]
    fired = {f.rule: f.first_step for f in problems}
    ranges = {f.rule: f.ranges for f in problems if getattr(f, "ranges", None)}
    out: dict[str, Any] = {
        "logged_steps": len(run.train_metrics),
        "fired": fired,
        "fired_ranges": ranges,
        "severity": {f.rule: f.severity for f in problems},
        "diagnosis_order": [f.rule for f in findings if f.severity != "info"],
        "first_evidence": problems[0].evidence if problems else None,
        # What the run raised while training (the rules of the code that trained it); `fired` above is the
        # diagnosis now: today's rules replayed over metrics.jsonl, these alerts and run_status.json merged.
        "live_alerts": [(a.get("step"), a.get("rule")) for a in run.alerts],
    }
    if case.healthy:
        out["ok"] = not problems
        return out
    caught = {rule: fired.get(rule) for rule in case.expect if rule in fired}
    on_time = {rule: step for rule, step in caught.items() if step is None or case.by_step is None or step <= case.by_step}
    # Health rules only: run_failed / run_killed are the post-mortem's record of how a run ended, not a judgement.
    wrong_critical = [f.rule for f in problems if f.severity == "critical" and f.rule not in case.expect
                      and f.rule in RULES]
    out["flagged_by_expected_rule"] = bool(on_time)
    # How a run ended (killed by the zoo's time limit, an error) is recorded, but the cause is the first rule.
    judged = [f for f in problems if f.rule in RULES]
    out["cause_first"] = bool(judged) and judged[0].rule == case.cause
    out["wrong_critical"] = wrong_critical
    out["ok"] = bool(on_time) and out["cause_first"] and not wrong_critical
    return out


def report_text(run_dir: Path, work: Path, case: Case) -> str:
    res = run_cli(["report", str(run_dir)], cap=None, timeout=600, log=work / case.name / "report.log")
    return res["tail"][-2500:]


def train_case(case: Case, config: Path, work: Path) -> dict[str, Any]:
    """`grpokit train` on the case's config, under its cap; exit code, wall and CPU seconds, output tail."""
    # CPU seconds of finished children, before and after: exact with --jobs 1, shared between
    # cases that end together with --jobs > 1. A judge server's CPU is not in it: it ends later.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = run_cli(["train", str(config)], cap=case.memory_cap_gib, timeout=max(900, case.steps * 240),
                  log=work / case.name / "train.log")
    if case.resume_to and res["rc"] == 0:
        # The run finished its steps; a user raises max_steps and resumes it, as `train --resume` advises.
        more = run_cli(["train", str(config), "--resume", "--set", f"training.max_steps={case.resume_to}"],
                       cap=case.memory_cap_gib, timeout=max(900, (case.resume_to - case.steps) * 240),
                       log=work / case.name / "resume.log")
        res = {**more, "wall_s": round(res["wall_s"] + more["wall_s"], 1), "first_leg": res}
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    res["cpu_s"] = round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 1)
    return res


@contextmanager
def judge_for(case: Case, work: Path) -> Iterator[LiveJudge | None]:
    """The case's judge server for the block (benchmarks/zoo/judge.py), or None when it has no judge."""
    if case.judge is None:
        yield None
        return
    with serving(case.kill_judge_after_step, metrics=work / case.name / "run" / "metrics.jsonl",
                 log=work / case.name / "judge.log") as judge:
        yield judge


def run_case(case: Case, work: Path, train: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"case": case.name, "what": case.what, "steps": case.steps,
                              "expect": list(case.expect), "by_step": case.by_step, "cause": case.cause,
                              "memory_cap_gib": case.memory_cap_gib}
    if case.skip:
        return {**result, "skipped": case.skip}
    if case.judge is not None and not server_available():
        return {**result, "skipped": f"not run: {JUDGE_MISSING}"}
    run_dir = work / case.name / "run"
    if train:
        if run_dir.exists():
            import shutil

            shutil.rmtree(run_dir)  # before a judge's killer watches run/metrics.jsonl
        with judge_for(case, work) as judge:
            config = case_config(case, work, judge.url if judge else None)
            if case.predict:
                result["doctor"] = doctor_prediction(case, config, work)
            result["train"] = train_case(case, config, work)
        if judge:
            result["judge"] = judge.record()
    elif (work / case.name / "result.json").is_file():
        old = json.loads((work / case.name / "result.json").read_text(encoding="utf-8"))
        result.update({k: old[k] for k in ("train", "doctor", "judge") if k in old})
    if "doctor" in result:
        result["doctor"]["predicted"] = _predicted(case, result["doctor"])
    result["score"] = score(case, run_dir)
    result["report"] = report_text(run_dir, work, case)
    (work / case.name / "result.json").write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return result


def export_fixture(case: Case, run_dir: Path, dest: Path) -> None:
    """The run's metric history, config and status as a test fixture (tests/health/fixtures/<case>/):
    small (numbers rounded, completions left out), so the rule tests replay real shapes."""
    from grpokit.health.diagnose import read_jsonl

    out = dest / case.name
    out.mkdir(parents=True, exist_ok=True)
    records, _ = read_jsonl(run_dir / "metrics.jsonl")
    with open(out / "metrics.jsonl", "w", encoding="utf-8") as f:
        for record in records:
            record = {k: round(v, 5) if isinstance(v, float) else v for k, v in record.items() if k != "time"}
            f.write(json.dumps(record) + "\n")
    for name in ("config.yaml", "run_status.json"):  # not alerts.jsonl: the tests replay the rules themselves
        if (run_dir / name).is_file():
            (out / name).write_text((run_dir / name).read_text(encoding="utf-8"), encoding="utf-8")


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    ran = [r for r in results if "score" in r]
    healthy = [r for r in ran if not r["expect"]]
    sick = [r for r in ran if r["expect"]]
    predictable = [r for r in ran if "doctor" in r]
    return {
        "healthy_clean": f"{sum(r['score']['ok'] for r in healthy)}/{len(healthy)}",
        "sick_flagged_by_expected_rule_on_time": f"{sum(r['score']['flagged_by_expected_rule'] for r in sick)}/{len(sick)}",
        "sick_cause_named_first": f"{sum(r['score']['cause_first'] for r in sick)}/{len(sick)}",
        "sick_cause_named_first_share": (sum(r['score']['cause_first'] for r in sick) / len(sick)) if sick else None,
        "critical_from_a_wrong_rule": [r["case"] for r in sick if r["score"]["wrong_critical"]],
        "doctor_predicted": f"{sum(r['doctor']['predicted'] for r in predictable)}/{len(predictable)}",
        "skipped": {r["case"]: r["skipped"] for r in results if "skipped" in r},
        "train_wall_s_total": round(sum(r.get("train", {}).get("wall_s", 0) for r in results), 1),
        "train_cpu_s_total": round(sum(r.get("train", {}).get("cpu_s", 0) for r in results), 1),
    }


def table(results: list[dict[str, Any]]) -> str:
    """Markdown: rules x cases, the step each rule first fired (W warning, C critical); the verdict last."""
    ran = [r for r in results if "score" in r]
    rules = sorted({rule for r in ran for rule in r["score"]["fired"]} | {x for r in ran for x in r["expect"]})
    lines = ["| case | " + " | ".join(f"`{rule}`" for rule in rules) + " | first cause named | ok |",
             "| --- |" + " --- |" * (len(rules) + 2)]
    for r in results:
        if "score" not in r:
            lines.append(f"| {r['case']} | " + " | ".join("" for _ in rules) + f" | skipped: {r.get('skipped', '')[:60]} | - |")
            continue
        s = r["score"]
        cells = []
        for rule in rules:
            step = s["fired"].get(rule, "")
            mark = "C" if s["severity"].get(rule) == "critical" else "W"
            cell = f"{mark}{step}" if rule in s["fired"] else ""
            if rule in r["expect"]:
                cell = f"**{cell or 'missed'}**"
            cells.append(cell)
        first = s["diagnosis_order"][0] if s["diagnosis_order"] else "none"
        lines.append(f"| {r['case']} | " + " | ".join(cells) + f" | {first} | {'yes' if s['ok'] else 'NO'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="case_set", choices=sorted(CASE_SETS), default="zoo",
                        help="zoo: the cases the rules were tuned on; heldout: runs read for the second round of fixes; "
                        "heldout2: runs chosen and labelled before those fixes")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="cases trained at once (one CPU thread each)")
    parser.add_argument("--work", default="", help="where the run directories go (default /tmp/grpokit-health-SET)")
    parser.add_argument("--rescore", action="store_true", help="score the run directories in --work again")
    parser.add_argument("--output", default="", help="default benchmarks/results/health_zoo.json (zoo), "
                        "health_zoo_heldout.json (heldout)")
    parser.add_argument("--fixtures", default="", help="also copy each run's metrics, config and status here")
    opts = parser.parse_args()
    cases = CASE_SETS[opts.case_set]
    opts.work = opts.work or f"/tmp/grpokit-health-{opts.case_set}"
    opts.output = opts.output or str(RESULTS / ("health_zoo.json" if opts.case_set == "zoo"
                                                else f"health_zoo_{opts.case_set}.json"))
    chosen = [c for c in cases() if not opts.cases or c.name in opts.cases.split(",")]
    if opts.cases and len(chosen) != len(opts.cases.split(",")):
        known = [c.name for c in cases()]
        raise SystemExit(f"unknown case in --cases; the cases are {known}")
    work = Path(opts.work)
    work.mkdir(parents=True, exist_ok=True)
    out_path = Path(opts.output)
    previous = json.loads(out_path.read_text(encoding="utf-8")) if out_path.is_file() else {}
    kept = {r["case"]: r for r in previous.get("cases", [])}
    started = time.time()
    header = {
        "command": " ".join(["python -m benchmarks.health_zoo", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "load_at_start": os.getloadavg()[0], "jobs": opts.jobs,
                    "note": "one CPU thread per training (OMP_NUM_THREADS=1); wall time is inflated when the "
                            "machine is shared, cpu_s is the training process's own CPU time"},
    }

    def save() -> None:
        ordered = [kept[c.name] for c in cases() if c.name in kept]
        result = {**header, "cases": ordered, "summary": summarise(ordered), "table": table(ordered),
                  "wall_s": round(time.time() - started, 1)}
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")

    def one(case: Case) -> None:
        result = run_case(case, work, train=not opts.rescore)
        if opts.fixtures and "score" in result:
            export_fixture(case, work / case.name / "run", Path(opts.fixtures))
        kept[case.name] = result
        verdict = "skipped" if "skipped" in result else ("ok" if result["score"]["ok"] else "NOT OK")
        print(f"{case.name}: {verdict} {result.get('score', {}).get('fired', '')} "
              f"{result.get('train', {}).get('wall_s', '')}s", flush=True)
        save()

    # Longest first: with several lanes the run ends when its longest case does.
    order = sorted(chosen, key=lambda c: -c.steps * (2 if c.base or "max_completion_length" in
                                                     c.changes.get("training", {}) else 1))
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        list(pool.map(one, order))
    save()
    print(table([kept[c.name] for c in cases() if c.name in kept]))
    print(json.dumps(summarise([kept[c.name] for c in cases() if c.name in kept]), indent=2))


if __name__ == "__main__":
    main()
