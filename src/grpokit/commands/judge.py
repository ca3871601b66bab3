"""`grpokit judge serve` (a local OpenAI-compatible judge on 127.0.0.1) and `grpokit judge check URL`."""
from __future__ import annotations

from typing import Optional

import typer

judge_app = typer.Typer(help="A judge model for llm_judge rewards: serve one locally, check an endpoint.",
                        no_args_is_help=True)


@judge_app.command("serve")
def serve(
    model: str = typer.Option("bundled:smollm2-135m-instruct",
                              help="a folder holding a transformers checkpoint, or the bundled model"),
    host: str = typer.Option("127.0.0.1", help="address to listen on (the server has no authentication)"),
    port: int = typer.Option(8090, help="port; llm_judge's default base_url is http://127.0.0.1:8090/v1"),
    max_len: int = typer.Option(4096, "--max-len", min=64,
                                help="longest request in tokens, prompt and reply (group mode shows every completion)"),
    threads: Optional[int] = typer.Option(None, help="CPU threads (default: half the cores, at most 4)"),
    device: str = typer.Option("auto", help="where the model runs: auto, cpu, cuda:0, ..."),
    continuous_batching: bool = typer.Option(False, help="batch concurrent requests together (paged attention)"),
):
    """Run `transformers serve`, an OpenAI-compatible server, on the judge model until Ctrl-C."""
    from grpokit.integrations.judge_server import JudgeServer, serve_foreground

    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: listening on {host}: anyone who can reach it can use the judge", err=True)
    server = JudgeServer.for_model(model, host=host, port=port, max_len=max_len, threads=threads, device=device,
                                   continuous_batching=continuous_batching)
    # Ctrl-C, SIGTERM and SIGHUP end the server with this command (a busy port fails before "ready").
    code = serve_foreground(server, typer.echo)
    if code:
        raise typer.Exit(code)


@judge_app.command("check")
def check(
    url: str = typer.Argument("http://127.0.0.1:8090/v1", help="the endpoint's base URL (ending in /v1)"),
    api_key_env: Optional[str] = typer.Option(None, help="NAME of the environment variable holding the API key"),
):
    """Say whether an OpenAI-compatible endpoint answers (exit 0) or not (exit 1)."""
    import os

    from grpokit.rewards.judge.client import probe

    key = os.environ.get(api_key_env) if api_key_env else None
    from grpokit.errors import ConfigError, RunError

    if api_key_env and not key:
        raise ConfigError(f"the environment variable {api_key_env} is not set")  # printed by commands.guard
    problem = probe(url, api_key=key)
    if problem:
        raise RunError(f"{url} does not answer: {problem}")
    typer.echo(f"ok: {url} answers")


def register(app: typer.Typer) -> None:
    app.add_typer(judge_app, name="judge")
