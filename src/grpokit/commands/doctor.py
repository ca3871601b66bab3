"""`grpokit doctor [CONFIG]`: checks before training. Exit 0 fine, 1 a check failed, 2 bad usage or config."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer


def doctor(
    config: Optional[Path] = typer.Argument(None, help="run config YAML; without it only the environment is checked"),
    set_: List[str] = typer.Option([], "--set", help="override a config value, e.g. --set training.max_steps=5"),
    probe: bool = typer.Option(True, "--probe/--no-probe", help="generate a few groups and score them"),
    probe_prompts: int = typer.Option(4, help="prompts (groups) the probe samples"),
    json_out: bool = typer.Option(False, "--json", help="print the checks as JSON"),
):
    """Check the environment, the config, memory, token lengths, and a sample of generations."""
    from grpokit.errors import ConfigError
    from grpokit.health.doctor import print_checks, run_doctor

    if config is not None and not config.is_file():
        raise ConfigError(f"config file {config} not found")  # printed by grpokit.commands.guard, exit 2

    def progress(done: int, total: int) -> None:
        # The probe samples whole groups on the CPU: minutes without a word otherwise.
        typer.echo(f"doctor: probe sampled {done}/{total} groups", err=True)

    # A TRL that renamed a hook grpokit overrides would fail silently mid-run: say so before training.
    from grpokit.health.doctor_checks import package_version

    trl_problems = None
    if package_version("trl"):
        from grpokit.training.trl_hooks import missing

        trl_problems = missing()
    checks = run_doctor(config, list(set_), probe=probe, probe_prompts=probe_prompts, progress=progress,
                        trl_problems=trl_problems)
    if json_out:
        import json

        typer.echo(json.dumps([c.to_dict() for c in checks], indent=2))
    else:
        print_checks(checks)
    raise typer.Exit(1 if any(c.status == "fail" for c in checks) else 0)


def register(app: typer.Typer) -> None:
    app.command()(doctor)
