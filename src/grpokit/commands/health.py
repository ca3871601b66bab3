"""`grpokit doctor [CONFIG]` (before training) and `grpokit report RUN_DIR` (during and after).

Exit codes: 0 fine, 1 a check failed, 2 bad usage or bad config.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer


def _fail_usage(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    @app.command()
    def doctor(
        config: Optional[Path] = typer.Argument(None, help="run config YAML; without it only the environment is checked"),
        set_: List[str] = typer.Option([], "--set", help="override a config value, e.g. --set training.max_steps=5"),
        probe: bool = typer.Option(True, "--probe/--no-probe", help="generate a few groups and score them"),
        probe_prompts: int = typer.Option(4, help="prompts (groups) the probe samples"),
        json_out: bool = typer.Option(False, "--json", help="print the checks as JSON"),
    ):
        """Check the environment, the config, memory, token lengths, and a sample of generations."""
        from grpokit.health.doctor import print_checks, run_doctor
        from grpokit.errors import ConfigError

        if config is not None and not config.is_file():
            _fail_usage(f"config file {config} not found")
        try:
            def progress(done: int, total: int) -> None:
                # The probe samples whole groups on the CPU: minutes without a word otherwise.
                typer.echo(f"doctor: probe sampled {done}/{total} groups", err=True)

            checks = run_doctor(config, list(set_), probe=probe, probe_prompts=probe_prompts, progress=progress)
        except ConfigError as exc:
            _fail_usage(str(exc))
        if json_out:
            import json

            typer.echo(json.dumps([c.to_dict() for c in checks], indent=2))
        else:
            print_checks(checks)
        raise typer.Exit(1 if any(c.status == "fail" for c in checks) else 0)

    @app.command()
    def report(
        run_dir: Path = typer.Argument(..., help="a run directory (runs/<name>), finished or still running"),
        out: Optional[Path] = typer.Option(None, help="write report.html and curves.png here instead"),
        json_out: bool = typer.Option(False, "--json", help="print the findings as JSON"),
    ):
        """Write curves.png and report.html for a run, and print the diagnosis."""
        if not run_dir.is_dir():
            _fail_usage(f"{run_dir} is not a directory; pass a run directory such as runs/<name>")
        from grpokit.health.diagnose import diagnose, format_findings, load_run
        from grpokit.reporting.report import write_report

        paths = write_report(run_dir, out)
        findings = diagnose(load_run(run_dir))
        if json_out:
            import json

            typer.echo(json.dumps({"findings": [f.to_dict() for f in findings],
                                   "html": str(paths["html"]), "png": str(paths["png"])}, indent=2))
        else:
            typer.echo(format_findings(findings))
            typer.echo(f"\nwrote {paths['png']}\nwrote {paths['html']}")
        sys.stdout.flush()
