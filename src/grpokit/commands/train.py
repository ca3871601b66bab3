"""`grpokit train CONFIG [--set k=v ...] [--resume] [--dry-run]` and `grpokit demo`."""
from __future__ import annotations

import json
from typing import List, Optional

import typer


def _run_console():
    """The console that narrates the run: silent on every rank but 0 of a multi-process launch,
    so `run directory`, the progress line and `done` appear once, however many processes train."""
    from rich.console import Console

    from grpokit.run_directory.ranks import is_main_process

    return Console(soft_wrap=True, quiet=not is_main_process())


def _fail(console, exc: Exception) -> None:
    from rich.console import Console
    from rich.text import Text

    from grpokit.errors import ConfigError
    from grpokit.run_directory.ranks import rank

    code = 2 if isinstance(exc, ConfigError) else 1
    label = "config error" if code == 2 else "run failed"
    if rank() != 0:
        # A failure can be one rank's alone (its own OOM, a lost peer), so every rank reports it,
        # named, through a console that is not the muted run console.
        label = f"rank {rank()}: {label}"
        console = Console(soft_wrap=True)
    # The error text is printed literally: messages from gloo or paths may hold "[/...]", which is markup to rich.
    console.print(Text.assemble((f"{label}: ", "bold red"), str(exc)), highlight=False)
    raise typer.Exit(code)


def train_command(
    config: str = typer.Argument(..., help="YAML run config (see configs/)"),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="override a key: --set training.max_steps=10"),
    resume: bool = typer.Option(False, "--resume", help="continue from the last complete checkpoint"),
    dry_run: bool = typer.Option(False, "--dry-run", help="validate (a data file or synthetic task loaded as training loads it), print the resolved config and GRPOConfig, stop"),
) -> None:
    """Train from one YAML file: validate, then run every stage with checkpoints and logs."""
    from grpokit.errors import ConfigError, RunError

    console = _run_console()
    try:
        from grpokit.config.run_config import load_config

        cfg = load_config(config, set_ or [])
        if dry_run:
            _dry_run(cfg, console)
            return
        from grpokit.health.doctor import check_judge_endpoints
        from grpokit.training.trainer import prepare_run_dir, train

        # A resume that is refused (exit 2) or has nothing to do (exit 0) says so before anything loads,
        # and leaves the run directory (config.yaml, run_status.json) as it was.
        plan = prepare_run_dir(cfg, resume)
        if plan is not None and plan.nothing_to_do:
            console.print(plan.message(cfg), markup=False, highlight=False)
            return
        check_judge_endpoints(cfg)  # a judge that is down: exit 2 before the model loads, as doctor does
        console.print(f"run directory: {cfg.run_dir}")
        try:
            run_dir = train(cfg, resume=resume, console=console)
        except KeyboardInterrupt:
            from grpokit.training.interrupted import interrupted_message

            # Exit 130, as a shell reports Ctrl-C, with where to pick the run up again.
            console.print(interrupted_message(cfg, config, set_ or []), style="yellow", markup=False, highlight=False)
            raise typer.Exit(130) from None
        console.print(f"[bold green]done[/bold green]: {run_dir}")
    except (ConfigError, RunError) as exc:
        _fail(console, exc)


def _dry_run(cfg, console) -> None:
    from grpokit.config import profiles
    from grpokit.config.run_config import build_reward_set, dump_yaml
    from grpokit.errors import ConfigError

    # Every reward built with its parameters, as training builds them: a value only the factory
    # judges (a fuzzy_match threshold of 5) fails here, with exit 2 and the reward's name.
    try:
        built = [build_reward_set(cfg, stage) for stage in cfg.stages or [None]]
    except ConfigError:
        raise
    except Exception as exc:  # a factory's own TypeError on an odd value: still a config problem, exit 2
        raise ConfigError(f"rewards: building them failed: {type(exc).__name__}: {exc}; fix that reward's params") from exc

    rows = _dry_run_data(cfg)
    console.print("# resolved config", highlight=False)
    console.print(dump_yaml(profiles.resolved_config(cfg)), highlight=False, markup=False)
    # Per stage, what TRL's GRPOTrainer is handed: GRPOConfig's keywords (under the names it takes) and
    # the reward functions (named as TRL logs them, rewards/<name>/mean: a repeated reward is name_2).
    for stage, rewards in zip(cfg.stages or [None], built):
        args = profiles.build_grpo_config(cfg, stage, check_hardware=False)
        label = f" for stage {stage.name}" if stage is not None else ""
        console.print(f"# GRPOConfig{label}, as TRL receives it (model dtype {profiles.model_dtype(cfg)}, "
                      f"backend {profiles.backend(cfg)})", highlight=False)
        kwargs = profiles.trl_kwargs(cfg, stage)
        console.print(json.dumps({k: kwargs[k] for k in sorted(kwargs)}, indent=2, default=str),
                      highlight=False, markup=False)
        console.print(f"# effective generation batch {args.generation_batch_size}, "
                      f"num_generations {args.num_generations}", highlight=False)
        console.print(f"# rewards{label}, built: {rewards.describe()}", highlight=False, markup=False)
        console.print(f"# reward_funcs{label}, as TRL receives them: {json.dumps(list(rewards.names))}",
                      highlight=False, markup=False)
    if rows:
        console.print(f"# data: {rows}", highlight=False, markup=False)


def _dry_run_data(cfg) -> str:
    """A data file or synthetic task loaded as training loads it (load_data), so a file train would refuse
    (a header-only CSV, a broken line) fails the dry run with the same message; a hub data set is not
    fetched (a dry run stays offline and quick)."""
    from grpokit.data import load_data, parse_source

    if parse_source(cfg.data.source).kind == "hf":
        return ""
    train_set, eval_set = load_data(cfg.data)
    return f"{len(train_set)} training rows, {len(eval_set) if eval_set is not None else 0} held out"


def demo_command(
    steps: Optional[int] = typer.Option(None, "--steps", help="training steps (default: the demo recipe's)"),
    output_dir: Optional[str] = typer.Option(None, "--output-dir", help="where to write the run"),
    recipe: str = typer.Option("words", "--recipe",
                               help="words: two thirds of the prompts stop at 'Answer:' after a question in words, and the model "
                                    "learns to write the sum and its result itself; restated: every prompt ends with "
                                    "the sum restated ('Answer: 47 + 38 =') for the model to finish"),
) -> None:
    """Train the bundled model to add two-digit numbers on this CPU, print held-out accuracy before/after."""
    from grpokit.errors import ConfigError, RunError

    console = _run_console()
    try:
        from grpokit.demo import run_demo
        from grpokit.demo_recipes import RECIPES

        if recipe not in RECIPES:
            raise ConfigError(f"--recipe {recipe!r}: use one of {', '.join(RECIPES)}")
        run_demo(steps=steps, output_dir=output_dir, console=console, recipe=RECIPES[recipe])
    except (ConfigError, RunError) as exc:
        _fail(console, exc)


def register(app: typer.Typer) -> None:
    app.command("train")(train_command)
    app.command("demo")(demo_command)
