"""Runs a skill/journey-*.md page's commands as written, in a scratch folder, with the tiny model.

The page's commands name `bundled:smollm2-135m-instruct` (what `grpokit init` writes); GRPOKIT_CACHE
points that name at the tiny random model, so a journey takes seconds and the commands stay the
ones a user types. A command whose comment says "Ctrl-C" gets a real SIGINT once its first
checkpoint is complete.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grpokit.cli import app
from grpokit.training import checkpoints as ckpts

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```", re.DOTALL | re.MULTILINE)


def page_blocks(page: str, lang: str) -> list[str]:
    """The page's fenced blocks of one language, in order, from "## The journey" on."""
    text = (ROOT / "skill" / page).read_text(encoding="utf-8").split("## The journey", 1)[1]
    return [m["body"] for m in FENCE.finditer(text) if m["lang"] == lang]


def page_commands(page: str) -> list[tuple[list[str], str]]:
    """(argv after `grpokit`, the line's comment) for each command of the journey's bash block."""
    [body] = page_blocks(page, "bash")
    out = []
    for line in body.splitlines():
        command, _, comment = line.partition("#")
        if command.strip():
            argv = shlex.split(command)
            assert argv[0] == "grpokit", line
            out.append((argv[1:], comment.strip()))
    return out


def grpokit(argv: list[str]):
    """One command in this process (no interpreter start-up), as CliRunner runs it."""
    return CliRunner().invoke(app, argv)


def interrupted(argv: list[str], checkpoint_dir: Path):
    """Run `argv`; once checkpoint-2 is complete, send this process a real SIGINT (the Ctrl-C a user presses)."""
    marker = checkpoint_dir / "checkpoint-2" / ckpts.MARKER
    done = threading.Event()

    def press_ctrl_c():
        while not done.is_set():
            if marker.exists():
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=press_ctrl_c, daemon=True)
    # A shell starts background jobs (`cmd &`, CI runners) with SIGINT ignored, and Python keeps it
    # ignored: the press would be lost. A user at a terminal has Python's own handler; so does this run.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    watcher.start()
    try:
        result = grpokit(argv)
    except KeyboardInterrupt:
        pytest.fail("the run ended before Ctrl-C reached it: raise training.max_steps in the page")
    finally:
        done.set()
        watcher.join()
        signal.signal(signal.SIGINT, previous)
    return result


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_journey(page: str, run_name: str, config: str, before_init=None, known_findings: tuple[str, ...] = ()) -> dict:
    """Every command of the page, each checked; returns what the checks below the commands need."""
    seen: dict = {}
    for argv, comment in page_commands(page):
        started = time.monotonic()
        if argv[0] == "init" and before_init is not None:
            before_init()  # the user's first try, which the page's data problem stops
        if "Ctrl-C" in comment:
            result = interrupted(argv, Path("runs") / run_name / "checkpoints")
            assert result.exit_code == 130, result.output
            seen["interrupted"] = result.output
            seen.setdefault("seconds", []).append(("train (Ctrl-C)", round(time.monotonic() - started, 1)))
            continue
        result = grpokit(argv)
        if argv[0] == "doctor":
            check_doctor(result, known_findings)
        elif argv[:2] == ["rewards", "probe"] and known_findings and result.exit_code == 1:
            found = set(re.findall(r"probe (\w+)", result.output)) | set(re.findall(r"/ (\w+):", result.output))
            assert found and found <= set(known_findings), result.output
        else:
            assert result.exit_code == 0, f"grpokit {' '.join(argv)}:\n{result.output}"
        seen[argv[0] if argv[0] != "rewards" else f"rewards {argv[1]}"] = result.output
        if argv[0] == "train":
            seen["resumed"] = result.output
        seen.setdefault("seconds", []).append((argv[0], round(time.monotonic() - started, 1)))
    return seen


# What a random model fails by being random: every completion scores the same, so no group varies.
MODEL_QUALITY = ("learning signal",)


def check_doctor(result, known_findings: tuple[str, ...] = ()) -> None:
    """doctor passes every check a journey's data and config decide; the tiny model fails only the
    learning-signal check (exit 1), which a real model is there to pass. `known_findings`: exploit
    probes a journey expects doctor to report (see its test)."""
    failed = [line.split("fail", 1)[1].strip() for line in result.output.splitlines() if line.lstrip().startswith("fail ")]
    assert result.exit_code in (0, 1), result.output
    assert "doctor: probe sampled 1/" in result.output  # the probe's progress (it was minutes of silence)
    for finding in failed:
        probe = re.match(r"rewards: [\w ()]+ / (\w+):", finding)
        assert finding.startswith(MODEL_QUALITY) or (probe and probe.group(1) in known_findings), result.output


def check_resumed_run(run_dir: Path, seen: dict, max_steps: int) -> None:
    """Ctrl-C said where to resume; the resumed run logged every step once."""
    said = " ".join(seen["interrupted"].split())
    assert "interrupted; the last complete checkpoint is" in said and "--resume" in said, said
    assert "resuming run from" in seen["resumed"]
    steps = [r["step"] for r in read_jsonl(run_dir / "completions.jsonl")]
    # Was 1,2,3,4,3,4 after a resume from checkpoint-2: the redone steps' records appeared twice.
    assert steps == sorted(steps) and set(steps) == set(range(1, max_steps + 1)), steps
    logged = [r["step"] for r in read_jsonl(run_dir / "metrics.jsonl") if "loss" in r]
    assert logged == list(range(1, max_steps + 1)), logged
    assert (run_dir / "report.html").is_file() and (run_dir / "curves.png").is_file()
