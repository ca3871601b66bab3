"""The tool tests share the sandbox tests' warm pool fixture (also what get_pool() returns)."""
import importlib.util
import sys
from pathlib import Path

_SANDBOX_TESTS = Path(__file__).resolve().parents[1] / "sandbox"
sys.path.insert(0, str(_SANDBOX_TESTS))  # its conftest imports sandbox_helpers
_spec = importlib.util.spec_from_file_location("grpokit_sandbox_conftest", _SANDBOX_TESTS / "conftest.py")
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
sandbox_pool = _module.sandbox_pool
