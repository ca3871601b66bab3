"""`grpokit rewards list | describe | test`: browse the reward library and try rewards on samples.

    grpokit rewards list [--json] [--family style]
    grpokit rewards describe numeric_match
    grpokit rewards test samples.jsonl --reward numeric_match:rel_tol=0.01 --reward repetition_penalty
    grpokit rewards test samples.jsonl --preset math_reasoning --json
    grpokit rewards probe configs/cpu-demo.yaml      # adversarial completions vs every reward; exit 1 if gamed

A samples file is JSONL, one object per line: `completion` (a string or a
message list), any columns the rewards read (answer, tests, schema, reference,
sources, prompt/prompts, ...) and optionally `label` (true/false or a number:
is this completion good?), which is checked against every reward's scores.
Exit codes: 0 fine, 1 a reward raised or returned NaN/infinity, or a
correctness reward agrees weakly with the labels (grpokit/rewards/agreement.py),
2 bad usage.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from grpokit.errors import ConfigError


def parse_reward_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """"name:k=v,k2=[1,2]" -> ("name", {"k": v, "k2": [1, 2]}); values are YAML scalars/lists."""
    import yaml

    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ConfigError(f"--reward {spec!r}: give a reward name, e.g. --reward numeric_match:rel_tol=0.01")
    params: dict[str, Any] = {}
    for part in _split_top_level(rest):
        key, eq, raw = part.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--reward {spec!r}: parameter {part!r} needs a value, as in {name}:key=value")
        try:
            params[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            params[key.strip()] = raw  # not YAML: keep the text as written
    return name, params


def _split_top_level(text: str) -> list[str]:
    # Commas separate parameters except inside [...], {...} or quotes: styles=[a,b] is one.
    parts, depth, quote, current = [], 0, None, []
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def load_samples(path: Path) -> tuple[list, dict[str, list]]:
    """(completions, columns) from a JSONL samples file; `prompt` becomes TRL's `prompts`."""
    if not path.is_file():
        raise ConfigError(f"samples file {str(path)!r} not found")
    from grpokit.data.jsonl import JsonlError, read_objects

    rows = []
    try:
        for number, row in read_objects(path):
            if "completion" not in row:
                raise ConfigError(f"{path}:{number}: each line needs a \"completion\" field, e.g. "
                                  '{"completion": "...", "answer": "42"}')
            rows.append(row)
    except JsonlError as exc:
        raise ConfigError(f'{exc}, e.g. {{"completion": "...", "answer": "42"}}') from None
    if not rows:
        raise ConfigError(f"{path} has no samples; write one JSON object per line")
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k != "completion" and k not in keys)
    completions = [row["completion"] for row in rows]
    columns = {("prompts" if key == "prompt" else key): [row.get(key) for row in rows] for key in keys}
    return completions, columns


def _summary(doc: str) -> str:
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _list(as_json: bool, family: Optional[str]) -> None:
    from grpokit.rewards import registry

    entries = [
        {"name": n, "family": registry.family(n), "aliases": list(registry.aliases(n)), "summary": _summary(registry.describe(n))}
        for n in registry.names()
    ]
    if family is not None:
        families = sorted({e["family"] for e in entries})
        if family not in families:
            raise ConfigError(f"no reward family {family!r}; families: {', '.join(families)}")
        entries = [e for e in entries if e["family"] == family]
    if as_json:
        typer.echo(json.dumps(entries, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(entries)} rewards")
    # Names are what people copy into configs: never fold or cut them.
    table.add_column("name", no_wrap=True, min_width=max(len(e["name"]) for e in entries) if entries else 4)
    for column in ("family", "aliases", "summary"):
        table.add_column(column, overflow="fold")
    for e in entries:
        table.add_row(e["name"], e["family"], ", ".join(e["aliases"]), e["summary"])
    Console().print(table)


def _test(samples: Path, rewards: list[str], preset_name: Optional[str], as_json: bool, limit: Optional[int], rows: int) -> int:
    from grpokit.rewards.debug import debug_reward
    from grpokit.rewards import get, get_preset, preset

    if not rewards and not preset_name:
        raise ConfigError("say which rewards to test: --reward NAME[:key=value,...] (repeatable) or --preset NAME")
    funcs = []
    if preset_name:
        spec = get_preset(preset_name)
        funcs.extend(preset(spec.name)[0])
        if not as_json:
            weights = ", ".join(f"{e['name']} x{e['weight']}" for e in spec.rewards)
            typer.echo(f"preset {spec.name}: {weights}")
    for spec_text in rewards:
        name, params = parse_reward_spec(spec_text)
        funcs.append(get(name, **params))
    completions, columns = load_samples(samples)
    if limit is not None:
        completions = completions[:limit]
        columns = {k: v[:limit] for k, v in columns.items()}
    result = debug_reward(funcs, completions, show=not as_json, max_rows=rows, **columns)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2, default=str))
    return 1 if result.failed else 0


def _describe(name: str) -> None:
    from grpokit.rewards import registry

    canonical = registry.canonical(name)
    aliases = registry.aliases(canonical)
    header = f"{canonical} (family {registry.family(canonical)}" + (f"; aliases {', '.join(aliases)})" if aliases else ")")
    typer.echo(header)
    typer.echo("")
    typer.echo(registry.describe(canonical) or "(no documentation)")


def _with_imports(imports: list[str], action):
    # The same loader a config's `imports:` uses, so a custom reward is tested as it will train.
    from grpokit.config.plugins import load_imports

    load_imports(imports)
    return action()


def _run(action) -> None:
    # Bad usage (unknown reward, bad parameter, bad samples file) raises; grpokit.commands.guard
    # prints the message that says what to change and exits 2.
    code = action()
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Reward functions: list them, read their docs, try them on samples.", no_args_is_help=True)
    app.add_typer(group, name="rewards")
    register_probe(group)

    @group.command("list")
    def list_command(
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
        family: Optional[str] = typer.Option(None, "--family", help="Only this family (format, correctness, length, style, code, ...)."),
        imports: list[str] = typer.Option([], "--import", "-i", help="A .py file or module that registers custom rewards (repeatable)."),
    ) -> None:
        """List every registered reward: name, family, aliases, one-line summary."""
        _run(lambda: _with_imports(imports, lambda: _list(as_json, family)))

    @group.command("describe")
    def describe_command(
        name: str = typer.Argument(..., help="A reward name or alias."),
        imports: list[str] = typer.Option([], "--import", "-i", help="A .py file or module that registers custom rewards (repeatable)."),
    ) -> None:
        """Print a reward's documentation: what it scores, its parameters, the columns it reads."""
        _run(lambda: _with_imports(imports, lambda: _describe(name)))

    @group.command("test")
    def test_command(
        samples: Path = typer.Argument(..., help="JSONL file: completion, the columns rewards read, optional label."),
        reward: list[str] = typer.Option([], "--reward", "-r", help="NAME or NAME:key=value,key=value (repeatable)."),
        preset: Optional[str] = typer.Option(None, "--preset", "-p", help="Test every reward of a preset."),
        as_json: bool = typer.Option(False, "--json", help="Print the scores and findings as JSON."),
        limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Score only the first N samples."),
        rows: int = typer.Option(20, "--rows", min=1, help="Rows shown in the table."),
        imports: list[str] = typer.Option([], "--import", "-i", help="A .py file or module that registers custom rewards (repeatable)."),
    ) -> None:
        """Score samples with rewards and report what looks wrong.

        Exit 1 when a reward raises or returns NaN/infinity, or when, with a `label` column, a
        correctness reward separates labelled-correct from labelled-wrong samples poorly
        (AUC below 0.75; correlation below 0.3 for graded labels). 2 on bad usage.
        (Sampling fresh completions from a model is not built in: write them to the JSONL first.)
        """
        _run(lambda: _with_imports(imports, lambda: _test(samples, reward, preset, as_json, limit, rows)))


def _probe(config: str, overrides: list[str], rows: int, as_json: bool) -> int:
    from grpokit.config.run_config import load_config
    from grpokit.probe.config import data_rows, probe_config, render

    cfg = load_config(config, overrides)
    results = probe_config(cfg, data_rows(cfg, rows))
    if as_json:
        typer.echo(json.dumps({label: report.to_dict() for label, report in results}, indent=2, default=str))
    else:
        render(results, typer.echo)
    return 0 if all(report.ok for _, report in results) else 1


def register_probe(group: typer.Typer) -> None:
    @group.command("probe")
    def probe_command(
        config: str = typer.Argument(..., help="YAML run config: its rewards and data are probed."),
        set_: list[str] = typer.Option([], "--set", help="override a key: --set data.max_samples=50"),
        rows: int = typer.Option(8, "--rows", min=1, help="Data-set rows to build the probes from."),
        as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
    ) -> None:
        """Try adversarial completions (empty, tag spam, prompt echo, hedged answers, hard-coded output, ...)
        built from the data's rows against every reward. Exit 1 when a reward can be gamed, 2 on a bad config."""
        _run(lambda: _probe(config, set_, rows, as_json))
