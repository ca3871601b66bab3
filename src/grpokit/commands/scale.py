"""`grpokit serve CONFIG` (TRL's vLLM server for the run's model) and `grpokit eval CONFIG --checkpoint DIR`."""
from __future__ import annotations

import json
import os
import shlex
import sys
from typing import List, Optional

import typer


def _fail(exc: Exception) -> None:
    from grpokit.errors import ConfigError

    code = 2 if isinstance(exc, ConfigError) else 1
    label = "config error" if code == 2 else "failed"
    typer.echo(f"{label}: {exc}", err=True)
    raise typer.Exit(code)


def serve_command(
    config: str = typer.Argument(..., help="YAML run config whose model (and training.vllm_* keys) to serve"),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="override a config key: --set training.vllm_server_port=8001"),
    host: Optional[str] = typer.Option(None, "--host", help="address to listen on (default 127.0.0.1: this machine only)"),
    port: Optional[int] = typer.Option(None, "--port", help="port (default training.vllm_server_port or 8000)"),
    tensor_parallel_size: Optional[int] = typer.Option(None, "--tensor-parallel-size", help="GPUs per model replica"),
    data_parallel_size: Optional[int] = typer.Option(None, "--data-parallel-size", help="model replicas (keep 1 for dense models)"),
    gpu_memory_utilization: Optional[float] = typer.Option(None, "--gpu-memory-utilization", help="share of each GPU vLLM may use (default 0.9)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the command line and stop"),
) -> None:
    """Start TRL's vLLM generation server for the config's model (then train with training.vllm_mode: server)."""
    from grpokit.errors import ConfigError, RunError
    from grpokit.optional import MissingDependency

    try:
        from grpokit.config import load_config
        from grpokit.integrations import vllm_server

        # Serving needs the model and vLLM keys only: data and rewards are not checked here.
        cfg = load_config(config, set_ or [], validate=False)
        settings = vllm_server.settings_from_config(
            cfg, host=host, port=port, tensor_parallel_size=tensor_parallel_size,
            data_parallel_size=data_parallel_size, gpu_memory_utilization=gpu_memory_utilization,
            resolve_model=not dry_run,
        )
        argv, env = vllm_server.build_command(settings)
        shown = " ".join(f"{k}={v}" for k, v in env.items()) + " " + shlex.join(argv)
        warning = vllm_server.exposed_warning(settings)
        if warning:
            typer.echo(f"warning: {warning}", err=True)
        if dry_run:
            typer.echo(shown)
            return
        from grpokit.optional import require

        require("vllm", "grpokit serve")
        typer.echo(f"starting: {shown}", err=True)
        typer.echo(f"train against it with: --set training.vllm_mode=server --set training.vllm_server_host={settings.host} "
                   f"--set training.vllm_server_port={settings.port}", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(argv[0], argv, {**os.environ, **env})
    except MissingDependency as exc:
        _fail(ConfigError(f"{exc}. On a machine without vLLM, train with profile cpu or memory (generation through transformers)"))
    except (ConfigError, RunError) as exc:
        _fail(exc)


def eval_command(
    config: str = typer.Argument(..., help="the run's YAML config"),
    checkpoint: str = typer.Option(..., "--checkpoint", help="a checkpoint directory, or a run directory (its newest checkpoint)"),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="override a config key"),
    k: int = typer.Option(4, "--k", min=1, help="samples per prompt (pass@k)"),
    max_prompts: Optional[int] = typer.Option(None, "--max-prompts", min=1, help="evaluate only the first N held-out prompts"),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", help="default: training.max_completion_length"),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="default: training.temperature; 0 is greedy"),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="prompts per generate call"),
    accuracy: str = typer.Option("auto", "--accuracy", help="reward that decides correctness (auto: numeric_match / math_equivalence / exact_match)"),
    eval_source: Optional[str] = typer.Option(None, "--eval-source", help="a separate eval set (data source string) instead of the held-out split"),
    no_before: bool = typer.Option(False, "--no-before", help="skip the base model"),
    output: Optional[str] = typer.Option(None, "--output", help="default: <run_dir>/eval.json"),
    as_json: bool = typer.Option(False, "--json", help="print eval.json's content instead of a table"),
) -> None:
    """Compare the base model with a checkpoint on held-out prompts: accuracy, pass@k, format rate, rewards, length."""
    from grpokit.errors import ConfigError, RunError

    try:
        from grpokit.config import load_config
        from grpokit.evaluate import evaluate_checkpoint, format_table

        cfg = load_config(config, set_ or [])

        def progress(label: str, done: int, total: int) -> None:
            typer.echo(f"\r{label}: {done}/{total} prompts", err=True, nl=done == total)

        result = evaluate_checkpoint(
            cfg, checkpoint, k=k, max_new_tokens=max_new_tokens, temperature=temperature, max_prompts=max_prompts,
            batch_size=batch_size, accuracy=None if accuracy == "none" else accuracy, eval_source=eval_source,
            before=not no_before, output=output, progress=progress,
        )
    except (ConfigError, RunError) as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=str))
        return
    typer.echo(f"{result['checkpoint']} on {result['held_out_prompts']} held-out prompts of {result['data']}")
    typer.echo(format_table(result["before"], result["after"]))
    typer.echo(f"written: {result['path']}")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
    app.command("eval")(eval_command)
