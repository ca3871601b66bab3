"""`grpokit serve`: the vLLM server command line built from a run config, and the error without vLLM."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import SimpleNamespace

import pytest

from grpokit.errors import ConfigError
from grpokit.integrations.vllm_server import build_command, exposed_warning, settings_from_config

HAS_VLLM = importlib.util.find_spec("vllm") is not None


def run_config(training=None, name="Qwen/Qwen2.5-1.5B-Instruct", dtype="auto", trust_remote_code=False):
    # The two parts of RunConfig that serve reads.
    return SimpleNamespace(model=SimpleNamespace(name=name, dtype=dtype, trust_remote_code=trust_remote_code), training=training or {})


def flag(argv, name):
    return argv[argv.index(name) + 1]


@pytest.mark.parametrize(
    "training, cli, expected",
    [
        ({}, {}, {"host": "127.0.0.1", "port": 8000, "tensor_parallel_size": 1, "gpu_memory_utilization": 0.9}),  # safe defaults: local only, the GPU to itself
        ({"vllm_server_host": "10.0.0.5", "vllm_server_port": 8001}, {}, {"host": "10.0.0.5", "port": 8001}),  # the config names the address
        ({"vllm_server_base_url": "http://10.1.2.3:9000", "vllm_server_host": "10.0.0.5"}, {}, {"host": "10.1.2.3", "port": 9000}),  # base URL wins, as in TRL's client
        ({"vllm_tensor_parallel_size": 2, "vllm_gpu_memory_utilization": 0.7, "vllm_max_model_length": 4096}, {}, {"tensor_parallel_size": 2, "gpu_memory_utilization": 0.7, "max_model_len": 4096}),  # the config's vLLM keys
        ({"vllm_server_port": 8001}, {"port": 9100, "host": "0.0.0.0", "data_parallel_size": 2}, {"port": 9100, "host": "0.0.0.0", "data_parallel_size": 2}),  # the command line wins
        ({"vllm_model_impl": "transformers"}, {}, {"vllm_model_impl": "transformers"}),  # model implementation passes through
    ],
)
def test_settings_from_config(training, cli, expected):
    s = settings_from_config(run_config(training), resolve_model=False, **cli)
    assert {key: getattr(s, key) for key in expected} == expected


def test_model_fields_map():
    s = settings_from_config(run_config(dtype="bfloat16", trust_remote_code=True), resolve_model=False)
    assert (s.model, s.dtype, s.trust_remote_code) == ("Qwen/Qwen2.5-1.5B-Instruct", "bfloat16", True)


def test_command_line_is_trls_with_our_values():
    s = settings_from_config(run_config({"vllm_tensor_parallel_size": 2, "vllm_max_model_length": 2048}), resolve_model=False, port=8123)
    argv, env = build_command(s)
    # TRL's server: vLLM's CLI, with the weight-transfer endpoints TRL's trainer needs.
    assert argv[:5] == [sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", "Qwen/Qwen2.5-1.5B-Instruct"]
    assert flag(argv, "--host") == "127.0.0.1" and flag(argv, "--port") == "8123"
    assert flag(argv, "--tensor-parallel-size") == "2" and flag(argv, "--max-model-len") == "2048"
    assert flag(argv, "--gpu-memory-utilization") == "0.9" and flag(argv, "--dtype") == "auto"
    assert "--weight-transfer-config" in argv and "--trust-remote-code" not in argv
    assert env == {"VLLM_SERVER_DEV_MODE": "1"}


@pytest.mark.parametrize(
    "cli, needle",
    [
        ({"gpu_memory_utilization": 1.5}, "must be in \\(0, 1\\]"),  # a share, not a percentage
        ({"port": 70000}, "not a TCP port"),  # out of range
        ({"tensor_parallel_size": 0}, "tensor_parallel_size must be at least 1"),  # no GPUs
    ],
)
def test_bad_settings(cli, needle):
    with pytest.raises(ConfigError, match=needle):
        settings_from_config(run_config(), resolve_model=False, **cli)


@pytest.mark.parametrize(
    "host, warned",
    [
        ("127.0.0.1", False),  # this machine only
        ("localhost", False),  # the same
        ("0.0.0.0", True),  # every interface: anyone can push weights
        ("10.0.0.5", True),  # a network address
    ],
)
def test_exposed_warning(host, warned):
    s = settings_from_config(run_config(), resolve_model=False, host=host)
    assert (exposed_warning(s) is not None) is warned


# --- the command --------------------------------------------------------------------------



@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(
        "name: served\n"
        "model: {name: Qwen/Qwen2.5-1.5B-Instruct}\n"
        "data: {source: synthetic:arithmetic}\n"
        "rewards: []\n"
        "profile: vllm\n"
        "training: {vllm_mode: server, vllm_server_port: 8011, num_generations: 8}\n",
        encoding="utf-8",
    )
    return path


def grpokit(*args):
    return subprocess.run([sys.executable, "-m", "grpokit", *args], capture_output=True, text=True, timeout=300)


def test_serve_dry_run_prints_the_command(config_file):
    out = grpokit("serve", str(config_file), "--dry-run", "--tensor-parallel-size", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("VLLM_SERVER_DEV_MODE=1 ")
    assert "--host 127.0.0.1 --port 8011 --tensor-parallel-size 2" in out.stdout
    assert "warning" not in out.stderr


def test_serve_warns_when_exposed(config_file):
    out = grpokit("serve", str(config_file), "--dry-run", "--host", "0.0.0.0")
    assert out.returncode == 0 and "anyone who can reach port 8011" in out.stderr


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed here")
def test_serve_without_vllm_is_a_clear_error(config_file):
    out = grpokit("serve", str(config_file))
    assert out.returncode == 2
    assert "vllm is needed for grpokit serve but is not installed: pip install 'grpokit[vllm]'" in out.stderr
    assert "Traceback" not in out.stderr


def test_serve_bad_config_exits_2(tmp_path):
    out = grpokit("serve", str(tmp_path / "missing.yaml"), "--dry-run")
    assert out.returncode == 2 and "not found" in out.stderr


@pytest.mark.parametrize(
    "training",
    [
        {"vllm_mode": "server"},  # the vllm profile's defaults on both sides
        {"vllm_mode": "server", "vllm_server_host": "10.0.0.2", "vllm_server_port": 8011},  # the config names the address
        {"vllm_mode": "server", "vllm_server_base_url": "http://10.1.1.1:9001"},  # a base URL, which TRL's client prefers
    ],
)
def test_server_and_trainer_agree_on_the_address(training):
    # `grpokit serve CONFIG` must listen where `grpokit train CONFIG` (TRL's client) will connect.
    from urllib.parse import urlparse

    from grpokit.config import profiles
    from grpokit.config.run_config import from_dict

    cfg = from_dict({"name": "x", "model": {"name": "Qwen/Qwen2.5-1.5B-Instruct"}, "profile": "vllm",
                     "training": {"num_generations": 8, **training}}, validate=False)
    client = profiles.grpo_kwargs(cfg, cuda=True, bnb=False, bf16_cpu=False)
    assert client["use_vllm"] is True and client["vllm_mode"] == "server"
    if client.get("vllm_server_base_url"):
        url = urlparse(client["vllm_server_base_url"])
        expected = (url.hostname, url.port)
    else:
        expected = (client["vllm_server_host"], client["vllm_server_port"])
    server = settings_from_config(cfg, resolve_model=False)
    assert (server.host, server.port) == expected
