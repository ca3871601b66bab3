"""`grpokit serve CONFIG`: TRL's vLLM generation server for the run's model.

Errors end through commands/guard.py: a bad config or a missing vLLM is exit 2.
"""
from __future__ import annotations

import os
import shlex
import sys
from typing import List, Optional

import typer


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
    from grpokit.errors import ConfigError
    from grpokit.optional import MissingDependency

    try:
        from grpokit.config.run_config import load_config
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
        raise ConfigError(f"{exc}. On a machine without vLLM, train with profile cpu or memory "
                          "(generation through transformers)") from None


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
