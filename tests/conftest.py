import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# Tests exercise this checkout's source even when another checkout is installed.
sys.path.insert(0, str(SRC))
# The checkout root, for tests.helpers and the tests of a benchmark (benchmarks.*). Behind SRC, so grpokit
# still comes from SRC.
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


def _tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process, its reaped children and its live descendants."""
    import resource
    import time

    import psutil

    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = time.process_time() + reaped.ru_utime + reaped.ru_stime
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:  # it exited meanwhile: its time shows up once reaped
            continue
        total += times.user + times.system
    return total


class CpuClock:
    """`with cpu_clock() as clock: ...; clock.seconds`: CPU, not wall, time of the block.

    Time bounds that catch a quadratic blow-up or a runaway loop hold on a loaded machine only
    when they count CPU: wall time grows with every other job sharing the cores, CPU time does
    not. Work done by worker processes (the sandbox, math-verify's pool) is counted too.
    """

    def __enter__(self) -> "CpuClock":
        self.seconds = None
        self._start = _tree_cpu_seconds()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = _tree_cpu_seconds() - self._start


@pytest.fixture
def cpu_clock():
    return CpuClock


@pytest.fixture(scope="session")
def tiny_run_dir(tmp_path_factory):
    """A real GRPO run directory, trained once per test run: 2 steps of the tiny random model.

    For tests that read what a run leaves behind (the report in a browser); training it once
    per session keeps its cost (tens of seconds on a loaded CPU) out of every test that reads it.
    """
    from grpokit.models.tiny import make_tiny_model
    from grpokit.config.run_config import from_dict
    from grpokit.training.trainer import train

    root = tmp_path_factory.mktemp("tiny-run")
    model = make_tiny_model(root / "model", hidden_size=64, num_attention_heads=4)
    config = {
        "name": "tiny-browser", "output_dir": str(root / "run"), "profile": "cpu",
        "model": {"name": str(model), "lora": {"r": 4}},
        "data": {"source": "synthetic:arithmetic", "max_samples": 32, "eval_size": 0},
        "rewards": [{"name": "ideal_length", "params": {"target": 6}}, {"name": "strict_xml_format"}],
        "training": {"max_steps": 2, "num_generations": 4, "per_device_train_batch_size": 4,
                     "max_completion_length": 12, "save_steps": 2, "learning_rate": 0.01},
    }
    return train(from_dict(config))


@pytest.fixture
def load_slack():
    """`load_slack(call)`: seconds of slack for a wall-clock limit (a timeout that must fire), from a baseline.

    Runs `call` (a quick operation of the same kind, e.g. one ordinary check) three times and
    returns 2 s or 20x its fastest run, whichever is more: on an idle machine the old fixed
    slack, on a loaded one as much more as the load makes everything slower, measured in the
    same test. A timer that did not fire would still take as long as the runaway work (minutes).
    """
    import time

    def measure(call) -> float:
        runs = []
        for _ in range(3):
            start = time.monotonic()
            call()
            runs.append(time.monotonic() - start)
        return max(2.0, 20 * min(runs))

    return measure


@pytest.fixture(scope="session")
def tiny_roles_model_dir(tmp_path_factory):
    """The tiny random Llama on disk, saved once per test run for every module that loads it from a path.

    No BOS, role markers as special tokens, grouped-query attention: unlike SmolLM2 on purpose.
    Tests load their own copy from it (from_pretrained), so none sees another's changes.
    """
    from grpokit.models.tiny import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny-roles") / "model", chat_format="roles", vocab_size=0,
                           hidden_size=64, num_attention_heads=4)


@pytest.fixture(scope="session")
def tiny_gqa_model():
    """A 2-layer random Llama (grouped-query attention) and its tokenizer, in memory, built once per test run.

    Read-only by contract (eval mode; doctor's probe and calibration only generate with it).
    """
    pytest.importorskip("torch")
    from grpokit.models.tiny import build_tiny_model

    model, tok = build_tiny_model(num_attention_heads=4, num_key_value_heads=2)
    return model.eval(), tok
