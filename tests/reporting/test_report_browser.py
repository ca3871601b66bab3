"""A real run's report.html opened in headless Chromium, checked as a person would look at it.

Every section and every curve panel rendered, the curves image decoded by the browser, the
diagnosis box there, no console errors, and a screenshot that is not blank. `.ci/run`
installs Debian's chromium where it is missing, so in CI this runs; elsewhere it skips
saying how to install it.
"""
from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

from grpokit.health.diagnose import health_config_for, load_run
from grpokit.reporting.report import panels, write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed: apt-get install -y chromium "
                                                         "(.ci/run installs it when run as root)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-sync",
         "--disable-component-update", "--no-first-run", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
SECTIONS = ["Diagnosis", "Curves", "Alerts", "Sampled completions", "About the loss", "Symptom, cause, fix"]
# Appended to a copy of the page: what the browser made of it, written into the DOM for --dump-dom.
PROBE = """<script>
window.addEventListener('load', () => {
  const img = document.querySelector('img[alt="training curves"]');
  const out = {h2: [...document.querySelectorAll('h2')].map(h => h.textContent),
               img: img ? [img.complete, img.naturalWidth, img.naturalHeight] : null,
               findings: document.querySelectorAll('.finding').length,
               height: document.body.scrollHeight};
  const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def chromium(page: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout)


def console_errors(stderr: str) -> list[str]:
    # Chromium logs the page's console to stderr: `...:CONSOLE(line)] "message", source: ...`.
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def probe(page: Path, tmp: Path) -> dict:
    copy = tmp / "probe.html"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium(copy, "--dump-dom").stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, f"the probe did not run: {dom[-500:]}"
    return json.loads(html.unescape(found.group(1)))


def ink(pixels: np.ndarray) -> float:
    """Share of pixels that are not (near) white."""
    rgb = pixels[..., :3].astype(float)
    if rgb.max() > 1.0:
        rgb /= 255.0
    return float((rgb.min(axis=-1) < 0.9).mean())


def test_the_console_capture_sees_an_error(tmp_path):
    # The "no console errors" check below means something only if an error would show up.
    page = tmp_path / "bad.html"
    page.write_text("<html><body><p>x</p><script>console.error('grpokit-probe-error');</script></body></html>")
    assert any("grpokit-probe-error" in line for line in console_errors(chromium(page, "--dump-dom").stderr))


def test_a_real_runs_report_renders_in_chromium(tiny_run_dir, tmp_path):
    paths = write_report(tiny_run_dir)
    run = load_run(tiny_run_dir)
    expected = panels(run.curve_metrics, health_config_for(run.config, run.train_metrics))
    assert len(expected) >= 4, [p.title for p in expected]

    seen = probe(paths["html"], tmp_path)
    assert [h for h in SECTIONS if not any(t.startswith(h) for t in seen["h2"])] == [], seen["h2"]
    # The browser decoded the inline curves PNG at its full size.
    png = mpimg.imread(paths["png"])
    assert seen["img"] == [True, png.shape[1], png.shape[0]], seen["img"]

    # Every panel drew something: the figure is a 2-column grid, one cell per panel, empty cells hidden.
    rows = math.ceil(len(expected) / 2)
    cell_h, cell_w = png.shape[0] // rows, png.shape[1] // 2
    for i, panel in enumerate(expected):
        r, c = divmod(i, 2)
        assert ink(png[r * cell_h:(r + 1) * cell_h, c * cell_w:(c + 1) * cell_w]) > 0.02, f"panel {panel.title!r} is blank"
    if len(expected) % 2:
        assert ink(png[(rows - 1) * cell_h:, cell_w:]) < 0.005, "the unused grid cell should be hidden"

    # The page as a person opens it: no console errors, and a screenshot with the page drawn on it.
    shot = tmp_path / "shot.png"
    result = chromium(paths["html"], f"--screenshot={shot}", "--window-size=1280,1600")
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    assert console_errors(result.stderr) == []
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (1600, 1280)
    assert ink(pixels) > 0.03 and float(pixels[..., :3].std()) > 0.05, "the screenshot is blank"
    # The diagnosis box: a finding, or the all-clear sentence, under its heading.
    page = paths["html"].read_text(encoding="utf-8")
    assert seen["findings"] > 0 or "No problems found in the metrics." in page
