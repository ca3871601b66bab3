"""report: curves.png and a self-contained report.html, also for a run still in progress."""
import base64
import json
import re
import subprocess


from grpokit.reporting.report import panels, series, write_report
from grpokit.health.rules import HealthConfig
from tests.helpers.synthetic_runs import history, write_run


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_report_of_a_running_run(tmp_path):
    # Partial last metrics line, alerts.jsonl present: both outputs written, alerts shown.
    write_run(tmp_path, "kl_blowup", partial_last_line=True)
    alert = {"step": 30, "rule": "kl_blowup", "severity": "critical", "message": "kl is 0.52", "fix": "lower lr"}
    (tmp_path / "alerts.jsonl").write_text(json.dumps(alert) + "\n")
    paths = write_report(tmp_path)
    width, height = _png_size(paths["png"].read_bytes())
    assert width > 800 and height > 800
    page = paths["html"].read_text()
    # Self-contained: the PNG is inline and nothing is fetched from elsewhere.
    inline = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert inline and base64.b64decode(inline.group(1)) == paths["png"].read_bytes()
    assert not re.search(r'(src|href)="(http|//)', page)
    assert "KL blow-up" in page and "kl is 0.52" in page      # diagnosis and live alert
    assert "still running" in page and "unreadable line" in page
    assert "Evaluation (eval.json)" in page and "0.57" in page  # eval.json table
    assert "What is" in page                                     # sampled completions


def test_model_output_is_escaped(tmp_path):
    # Completions are model output: a <script> must arrive as text, not run.
    write_run(tmp_path, "healthy")
    sample = {"step": 1, "prompt": [{"role": "user", "content": "hi <b>"}],
              "completion": [{"role": "assistant", "content": "<script>alert(1)</script>"}],
              "rewards": {"r": None}}
    (tmp_path / "completions.jsonl").write_text(json.dumps(sample) + "\n")
    page = write_report(tmp_path)["html"].read_text()
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "hi &lt;b&gt;" in page
    assert "r: <b>None</b>" in page  # a None score is shown as None, not as 0


def test_empty_run_dir_still_renders(tmp_path):
    # Before the first logged step: the page says so instead of failing.
    paths = write_report(tmp_path)
    assert "No training metrics yet" in paths["html"].read_text()
    assert paths["png"].stat().st_size > 0


def test_series_breaks_at_nan():
    steps, values = series(history("nan", steps=40), "loss")
    assert len(steps) == 40 and values[-1] != values[-1]  # NaN kept so the line breaks there


def test_bands_follow_the_run_thresholds():
    hc = HealthConfig.from_dict({"rules": {"kl_blowup": {"kl_max": 0.2}}, "max_completion_length": 100})
    by_title = {p.title: p for p in panels(history("healthy"), hc)}
    assert by_title["kl"].band == (0.0, 0.2)
    assert by_title["completion length"].band == (0.0, 85.0)


def test_cli_report(tmp_path):
    import sys
    write_run(tmp_path, "zero_std")
    proc = subprocess.run([sys.executable, "-m", "grpokit", "report", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "No learning signal" in proc.stdout and (tmp_path / "report.html").is_file()
    missing = subprocess.run([sys.executable, "-m", "grpokit", "report", str(tmp_path / "nope")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "not a directory" in missing.stderr


def test_finished_when_max_steps_reached(tmp_path):
    # The metrics writer drops TRL's end-of-training summary, so reaching max_steps is the sign.
    write_run(tmp_path, "healthy")
    assert "finished" in write_report(tmp_path)["html"].read_text()


def test_memory_and_step_time_panels_only_when_logged():
    hc = HealthConfig(max_completion_length=100)
    old = [p.title for p in panels(history("healthy"), hc)]
    assert "memory (GB)" not in old and "seconds per step" not in old
    logged = [dict(r, step_time=20.0, **{"memory/rss_gb": 5.4}) for r in history("healthy")]
    by_title = {p.title: p for p in panels(logged, hc)}
    assert by_title["memory (GB)"].keys[0] == "memory/rss_gb" and by_title["memory (GB)"].from_zero
    assert by_title["seconds per step"].keys == ["step_time"]


def test_cut_gap_panel_beside_the_share_cut_when_logged():
    hc = HealthConfig(max_completion_length=100)
    assert not any("cut_answer_gap" in p.title for p in panels(history("healthy"), hc))
    logged = [dict(r, **{"completions/cut_answer_gap": 0.1}) for r in history("healthy")]
    titles = [p.title for p in panels(logged, hc)]
    assert "cut_answer_gap" in titles[titles.index("completions/clipped_ratio") + 1]


def test_held_out_accuracy_panel_first_when_logged(tmp_path):
    hc = HealthConfig(max_completion_length=100)
    assert not any("held-out" in p.title for p in panels(history("healthy"), hc))
    records = history("healthy")
    # Evaluation records sit between training records (eval: every 10), with their own keys only.
    evals = [{"step": s, "stage": None, "eval/accuracy": acc, "eval/reward": acc} for s, acc in ((0, 0.25), (10, 0.4), (20, 0.55))]
    logged = evals[:1] + records[:10] + evals[1:2] + records[10:20] + evals[2:] + records[20:]
    first = panels(logged, hc)[0]
    assert first.title.startswith("held-out accuracy") and first.keys == ["eval/accuracy"]
    assert series(logged, "eval/accuracy") == ([0.0, 10.0, 20.0], [0.25, 0.4, 0.55])
    # The report still renders, and the training panels read only the training records.
    write_run(tmp_path, "healthy")
    with open(tmp_path / "metrics.jsonl", "a") as fh:
        for rec in evals:
            fh.write(json.dumps(rec) + "\n")
    paths = write_report(tmp_path)
    assert paths["png"].stat().st_size > 0 and "finished" in paths["html"].read_text()
    # The report reads the run directory, held-out records included (not only the training logs).
    from grpokit.health.diagnose import load_run

    run = load_run(tmp_path)
    assert len(run.curve_metrics) == len(run.train_metrics) + 3
    assert panels(run.curve_metrics, hc)[0].title == "held-out accuracy"
