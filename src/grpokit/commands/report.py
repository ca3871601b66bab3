"""`grpokit report RUN_DIR`: curves.png, report.html and the diagnosis of a run, finished or still going."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer


def report(
    run_dir: Path = typer.Argument(..., help="a run directory (runs/<name>), finished or still running"),
    out: Optional[Path] = typer.Option(None, help="write report.html and curves.png here instead"),
    json_out: bool = typer.Option(False, "--json", help="print the findings as JSON"),
):
    """Write curves.png and report.html for a run, and print the diagnosis."""
    from grpokit.errors import ConfigError

    if not run_dir.is_dir():
        raise ConfigError(f"{run_dir} is not a directory; pass a run directory such as runs/<name>")
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


def register(app: typer.Typer) -> None:
    app.command()(report)
