"""The tests use no benchmark as a library: what both need is in tests/helpers or the package.

A test may import a benchmark only to test that benchmark's own logic; each such import is named
here with the reason, so a new one is a decision, not a shortcut.
"""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# test file (relative to tests/) -> the benchmark modules it tests, and why they are its subject.
TESTS_OF_BENCHMARKS = {
    # The proportion statistics every learning claim in benchmarks/results is computed with.
    "test_benchmark_stats.py": {"benchmarks.stats"},
    # The health zoo's judge case: when its judge is killed and the config it trains on.
    "test_zoo_judge.py": {"benchmarks.health_zoo", "benchmarks.zoo.cases", "benchmarks.zoo.judge"},
    # The script that writes configs/data/tool_math_fewshot.jsonl still writes the committed file.
    "tools/test_tool_recipe_data.py": {"benchmarks.make_tool_fewshot_data"},
    # The memory benchmark's held-out check: doctor's estimate replayed on the GPU benchmark's runs
    # (its run specs and model shapes are the GPU benchmark's definitions, measured on that machine).
    "health/test_memory_estimate.py": {"benchmarks.memory_estimate"},
}


def benchmark_imports(tests: Path = TESTS) -> dict[str, set[str]]:
    """test file -> the benchmarks.* modules it imports anywhere (functions included)."""
    found: dict[str, set[str]] = {}
    for path in sorted(tests.rglob("*.py")):
        modules = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "benchmarks":
                modules.update(f"benchmarks.{alias.name}" for alias in node.names)  # from benchmarks import stats
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module)
        modules = {m for m in modules if m == "benchmarks" or m.startswith("benchmarks.")}
        if modules:
            found[path.relative_to(tests).as_posix()] = modules
    return found


def test_only_tests_of_a_benchmark_import_it():
    assert benchmark_imports() == TESTS_OF_BENCHMARKS


def test_a_test_using_a_benchmark_as_a_helper_is_named(tmp_path):
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "runs.py").write_text("import json\n")
    (tmp_path / "test_report.py").write_text("def test_x():\n    from benchmarks.synthetic_runs import history\n")
    (tmp_path / "test_other.py").write_text("from benchmarks import stats\nfrom tests.helpers import runs\n")
    (tmp_path / "test_bare.py").write_text("import benchmarks.zoo.judge as judge\n")
    assert benchmark_imports(tmp_path) == {
        "test_bare.py": {"benchmarks.zoo.judge"},
        "test_report.py": {"benchmarks.synthetic_runs"},
        "test_other.py": {"benchmarks.stats"},
    }
