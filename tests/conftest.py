import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# Tests exercise this checkout's source even when another checkout is installed.
sys.path.insert(0, str(SRC))
# The checkout root, for benchmarks.tiny_model: the tiny test model lives with the benchmarks,
# which use it too and must not import the test suite. Behind SRC, so grpokit still comes from SRC.
sys.path.insert(1, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
# CI and developers have shared/ beside the checkout; a worktree elsewhere sets GRPOKIT_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("GRPOKIT_SHARED_DATA") or ROOT.parent / "shared" / "data")


@pytest.fixture
def shared_data():
    """Path to ../shared/data; skips the test when that folder is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data sets not found at {SHARED_DATA}")
    return SHARED_DATA
