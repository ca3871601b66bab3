"""Render a run's report.html and photograph it in headless Debian chromium.

    python benchmarks/report_screenshot.py [RUN_DIR] [--scenario collapse] [--out benchmarks/results/report_screenshot.png]

Without RUN_DIR a synthetic run (tests/helpers/synthetic_runs.py) is written to a temp dir,
so the page can be checked before a real demo run exists. Needs `chromium`
(apt-get install -y chromium). Writes the PNG and <out>.json with what was checked.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT))  # tests.helpers.synthetic_runs

from grpokit.reporting.report import write_report  # noqa: E402
from tests.helpers.synthetic_runs import write_run  # noqa: E402

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
]


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("chromium not found: apt-get update && apt-get install -y chromium")


def screenshot(html: Path, png: Path, size: str = "1280,2400", timeout: float = 120) -> dict:
    """Open html in headless chromium and save a screenshot; also dump the DOM to check it rendered."""
    browser = find_chromium()
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        flags = CHROMIUM_FLAGS + [f"--user-data-dir={profile}", f"--window-size={size}"]
        start = time.perf_counter()
        shot = subprocess.run([browser, *flags, f"--screenshot={png}", html.resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - start
        dom = subprocess.run([browser, *flags, "--dump-dom", html.resolve().as_uri()],
                             capture_output=True, text=True, timeout=timeout)
    if shot.returncode != 0 or not png.is_file():
        raise SystemExit(f"chromium failed ({shot.returncode}): {shot.stderr[-2000:]}")
    text = dom.stdout
    return {
        "browser": subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip(),
        "screenshot": str(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png),
        "screenshot_bytes": png.stat().st_size,
        "seconds": round(seconds, 2),
        "dom_has_curves_image": 'src="data:image/png;base64,' in text,
        "dom_has_diagnosis": "<h2>Diagnosis</h2>" in text,
        "dom_has_completions": "Sampled completions" in text,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", help="a run directory; default: a synthetic run")
    parser.add_argument("--scenario", default="collapse", help="synthetic scenario when no run_dir is given")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "report_screenshot.png"))
    parser.add_argument("--window-size", default="1280,2400")
    args = parser.parse_args()
    tmp = None
    if args.run_dir:
        run_dir = Path(args.run_dir)
    else:
        tmp = tempfile.TemporaryDirectory()
        run_dir = write_run(Path(tmp.name) / f"synthetic-{args.scenario}", args.scenario, partial_last_line=True)
    paths = write_report(run_dir)
    out = Path(args.out)
    result = screenshot(paths["html"], out, args.window_size)
    result.update(run_dir=str(run_dir) if args.run_dir else f"synthetic:{args.scenario}",
                  html_bytes=paths["html"].stat().st_size)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if tmp:
        tmp.cleanup()
    if not all(result[k] for k in ("dom_has_curves_image", "dom_has_diagnosis", "dom_has_completions")):
        raise SystemExit("the rendered page is missing a section")


if __name__ == "__main__":
    main()
