"""Imports the user's own reward modules named in a config's `imports:`.

A custom reward registers itself with `@grpokit.rewards.register(...)` when its
module is imported; `imports:` lets `grpokit train`, `doctor` and `eval` import
it before the config's reward names are checked. An entry is a module name
(`my_project.rewards`) or a path to a `.py` file (relative to the config's folder).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from grpokit.errors import ConfigError


def load_imports(entries: list[str]) -> None:
    for entry in entries:
        if entry.endswith(".py"):
            _load_file(Path(entry))
        else:
            try:
                importlib.import_module(entry)
            except ImportError as exc:
                raise ConfigError(
                    f"imports: cannot import module {entry!r} ({exc}); install it or put it on PYTHONPATH, "
                    "or name its .py file instead"
                ) from exc


def _load_file(path: Path) -> None:
    if not path.is_file():
        raise ConfigError(f"imports: {path} does not exist; give a .py path relative to the config's folder")
    name = f"grpokit_user_{path.stem}_{abs(hash(str(path.resolve()))):x}"
    if name in sys.modules:
        return  # already imported: importing twice would register its rewards twice
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f"imports: {path} failed to import: {exc!r}") from exc


def resolve_paths(entries: list, config_dir: Path) -> list:
    """Relative .py entries are looked up beside the config when not found from the working directory."""
    resolved = []
    for entry in entries:
        if isinstance(entry, str) and entry.endswith(".py") and not Path(entry).exists() and (config_dir / entry).exists():
            entry = str(config_dir / entry)
        resolved.append(entry)
    return resolved
