"""The import graph keeps the house's direction: leaves import no stage, each stage imports only
leaves and the stages before it, nothing imports the command line on top, and no two packages
import each other (not even two leaves, which the layers alone would allow).

Read from the source with ast (every import, including those inside functions), so
a lazy import cannot hide a wrong-way dependency. docs/architecture.md shows the same
layers; a test there checks that it names these lists.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "grpokit"

# The reward library is usable (and testable) without the training stack.
HEAVY = ("torch", "transformers", "trl", "peft", "accelerate")
# The leaf packages: usable without any stage of the run that sits on top of them.
LEAVES = ("grpokit.completions", "grpokit.answer_format", "grpokit.errors", "grpokit.optional", "grpokit.bundled", "grpokit.sandbox",
          "grpokit.rewards", "grpokit.data", "grpokit.tools", "grpokit.models", "grpokit.run_directory",
          "grpokit.debug")
# The stages of a run, in order: each may import the leaves and the stages before it, never one after it.
STAGES = ("grpokit.config", "grpokit.probe", "grpokit.health", "grpokit.evaluate", "grpokit.training", "grpokit.reporting",
          "grpokit.integrations")
# On top: the command line, the demo and the generated docs; nothing else imports them.
TOP = ("grpokit.cli", "grpokit.commands", "grpokit.demo", "grpokit.demo_recipes", "grpokit.docgen", "grpokit.__main__")
# (module, imported package, why it is allowed)
ALLOWED = {
    ("grpokit.rewards.length", "transformers"):
        "a tokenizer by name, loaded only when a config asks length rewards to count tokens with it",
    ("grpokit.rewards.reward_model", "torch"):
        "a reward model is a network: loaded on its first batch, never at import or construction",
    ("grpokit.rewards.reward_model", "transformers"):
        "the reward model's checkpoint and tokenizer, loaded on its first batch",
}


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from grpokit import train`
    return found


def _under(name: str, prefixes) -> str | None:
    return next((p for p in prefixes if name == p or name.startswith(p + ".")), None)


def layer_of(name: str) -> str | None:
    """'leaf', a stage's package, 'top', or None (the package root, grpokit/__init__)."""
    if _under(name, LEAVES):
        return "leaf"
    if _under(name, TOP):
        return "top"
    return _under(name, STAGES)


def violations(root: Path = SRC) -> list[str]:
    """One line per import that goes the wrong way."""
    out = []
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        mine = layer_of(name)
        for imported in sorted(imports_of(path, name)):
            if _under(name, ("grpokit.rewards",)):
                heavy = _under(imported, HEAVY)
                if heavy and (name, heavy) not in ALLOWED:
                    out.append(f"{name} imports {imported}: the reward library must not need {heavy}")
            theirs = layer_of(imported)
            if mine == "leaf" and theirs in STAGES:
                out.append(f"{name} imports {imported}: a leaf package never imports a stage of the run")
            elif mine in STAGES and theirs in STAGES and STAGES.index(theirs) > STAGES.index(mine):
                out.append(f"{name} imports {imported}: {mine} comes before {theirs} in the stage order")
            if mine != "top" and theirs == "top":
                out.append(f"{name} imports {imported}: nothing below the command line imports it")
    return out


def unit_of(name: str, units) -> str | None:
    """The package (or top-level module) directly under grpokit that `name` belongs to."""
    return _under(name, units)


def package_graph(root: Path = SRC) -> dict[str, dict[str, str]]:
    """{package: {package it imports: the first module-level import that makes the edge}}.

    A package is each directory or module directly under grpokit (rewards, data, answer_format,
    ...); imports inside one package are not edges. The package root grpokit/__init__ is left out.
    """
    units = sorted({"grpokit." + p.relative_to(root).parts[0].removesuffix(".py")
                    for p in root.rglob("*.py") if p.relative_to(root).parts != ("__init__.py",)})
    graph: dict[str, dict[str, str]] = {u: {} for u in units}
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        mine = unit_of(name, units)
        if mine is None:
            continue
        for imported in sorted(imports_of(path, name)):
            theirs = unit_of(imported, units)
            if theirs and theirs != mine:
                graph[mine].setdefault(theirs, f"{name} imports {imported}")
    return graph


def cycles(root: Path = SRC) -> list[str]:
    """One line per package cycle: the packages in order, then the import that makes each edge."""
    graph = package_graph(root)
    found, seen = [], set()
    for start in graph:  # a path back to `start` through packages after it: each cycle once
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node], reverse=True):
                if nxt == start:
                    key = frozenset(path)
                    if key not in seen:
                        seen.add(key)
                        ring = [*path, start]
                        why = "; ".join(graph[a][b] for a, b in zip(ring, ring[1:]))
                        found.append(f"{' -> '.join(ring)} ({why})")
                elif nxt > start and nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    return sorted(found)


def test_every_module_has_a_layer():
    # A new top-level package must be placed in the order, or its imports go unchecked.
    unplaced = [module_name(p, SRC) for p in sorted(SRC.rglob("*.py")) if layer_of(module_name(p, SRC)) is None]
    assert unplaced == ["grpokit"]


def test_the_package_imports_one_way():
    assert violations() == []


def test_no_two_packages_import_each_other():
    # A cycle makes neither package usable or testable alone, even between two leaves.
    assert cycles() == []


def test_a_planted_cycle_is_named(tmp_path):
    # The layout before the probe became a stage: rewards.probe loaded data, data.config read the
    # answer format from rewards. Planted back into a copy, the check names the ring and its imports.
    import shutil

    root = tmp_path / "grpokit"
    shutil.copytree(SRC, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "rewards" / "planted.py").write_text("def f():\n    from grpokit.data import load_data\n")
    (root / "data" / "planted.py").write_text("from grpokit.rewards.format_params import with_answer_format\n")
    assert cycles(root) == [
        "grpokit.data -> grpokit.rewards -> grpokit.data (grpokit.data.planted imports grpokit.rewards.format_params; "
        "grpokit.rewards.planted imports grpokit.data)",
    ]


def test_a_planted_violation_is_found(tmp_path):
    # A copy of the real tree with wrong-way imports added: the checker must name each.
    import shutil

    root = tmp_path / "grpokit"
    shutil.copytree(SRC, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "rewards" / "planted.py").write_text("def f():\n    import torch\n    from ..training.trainer import train\n")
    (root / "data" / "planted.py").write_text("from grpokit import cli\n")
    (root / "tools" / "planted.py").write_text("from grpokit.health.rules import HealthConfig\n")
    # Between stages: config is first, so it may not import training; health comes before evaluate.
    (root / "config" / "planted.py").write_text("def f():\n    from grpokit.training import trainer\n")
    (root / "health" / "planted.py").write_text("from grpokit.evaluate.during import HeldOutEvalCallback\n")
    (root / "evaluate" / "planted.py").write_text("from grpokit.health import rules\n")  # allowed: health is earlier
    found = violations(root)
    assert found == [
        "grpokit.config.planted imports grpokit.training: grpokit.config comes before grpokit.training in the stage order",
        "grpokit.config.planted imports grpokit.training.trainer: grpokit.config comes before grpokit.training in the stage order",
        "grpokit.data.planted imports grpokit.cli: nothing below the command line imports it",
        "grpokit.health.planted imports grpokit.evaluate.during: grpokit.health comes before grpokit.evaluate in the stage order",
        "grpokit.health.planted imports grpokit.evaluate.during.HeldOutEvalCallback: grpokit.health comes before grpokit.evaluate in the stage order",
        "grpokit.rewards.planted imports grpokit.training.trainer: a leaf package never imports a stage of the run",
        "grpokit.rewards.planted imports grpokit.training.trainer.train: a leaf package never imports a stage of the run",
        "grpokit.rewards.planted imports torch: the reward library must not need torch",
        "grpokit.tools.planted imports grpokit.health.rules: a leaf package never imports a stage of the run",
        "grpokit.tools.planted imports grpokit.health.rules.HealthConfig: a leaf package never imports a stage of the run",
    ]


def test_allowed_exceptions_still_exist():
    # An allowance for an import that is gone would silently permit the next one.
    for module, package in ALLOWED:
        path = SRC.joinpath(*module.split(".")[1:]).with_suffix(".py")
        assert any(_under(i, (package,)) for i in imports_of(path, module)), (module, package)


def test_the_architecture_page_shows_these_layers():
    # docs/architecture.md's layer block is what a maintainer reads; it must say what this test enforces.
    page = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = page.split("<!-- layers: checked by tests/test_import_layers.py -->", 1)[1].split("```")[1]
    shown = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].split() for line in block.strip().splitlines()}
    short = lambda names: [n.removeprefix("grpokit.") for n in names]  # noqa: E731
    assert shown == {"leaves": short(LEAVES), "stages": short(STAGES), "top": short(TOP)}
