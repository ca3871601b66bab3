"""`grpokit serve` (this module builds its command line): TRL's vLLM generation server for a run config's model.

The server is the one `trl vllm-serve` starts (vLLM's own `vllm serve` with the
weight-transfer endpoints TRL's trainer needs), configured from the run config:

    model                      model.name (bundled and GGUF models resolved to a local path)
    --host / --port            training.vllm_server_host / vllm_server_port, or the host and
                               port of training.vllm_server_base_url; 127.0.0.1:8000 otherwise
    --tensor-parallel-size     training.vllm_tensor_parallel_size (1)
    --gpu-memory-utilization   training.vllm_gpu_memory_utilization (0.9: the server owns its GPU)
    --max-model-len            training.vllm_max_model_length
    --dtype                    model.dtype (auto)
    --model-impl               training.vllm_model_impl (vllm)
    --trust-remote-code        model.trust_remote_code

It listens on 127.0.0.1 unless the config or the command line names another
address: TRL's server listens on every interface by default, and it accepts
weight updates from anyone who can reach it.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from grpokit.errors import ConfigError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# In server mode vLLM has its GPU(s) to itself; TRL's 0.3 default is for colocate mode.
DEFAULT_GPU_MEMORY = 0.9


@dataclass
class ServeSettings:
    model: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY
    max_model_len: int | None = None
    dtype: str = "auto"
    vllm_model_impl: str = "vllm"
    trust_remote_code: bool = False


def _model_path(name: str) -> str:
    """What vLLM should load for model.name: a local directory, a .gguf file or a hub id."""
    if name.startswith("bundled:"):
        from grpokit.bundled import ensure_bundled

        return str(ensure_bundled(name))
    return name


def settings_from_config(cfg, *, host: str | None = None, port: int | None = None, tensor_parallel_size: int | None = None,
                         data_parallel_size: int | None = None, gpu_memory_utilization: float | None = None,
                         resolve_model: bool = True) -> ServeSettings:
    """ServeSettings from a RunConfig's user keys (not the profile's colocate defaults), then the command line."""
    training = dict(cfg.training or {})
    s = ServeSettings(model=_model_path(cfg.model.name) if resolve_model else cfg.model.name)
    s.host = training.get("vllm_server_host") or s.host
    s.port = int(training.get("vllm_server_port") or s.port)
    base_url = training.get("vllm_server_base_url")
    if base_url:
        # TRL's trainer prefers the base URL over host and port; the server must match it.
        parsed = urlparse(base_url if "//" in base_url else f"http://{base_url}")
        if parsed.hostname:
            s.host = parsed.hostname
        if parsed.port:
            s.port = parsed.port
    s.tensor_parallel_size = int(training.get("vllm_tensor_parallel_size") or 1)
    s.gpu_memory_utilization = float(training.get("vllm_gpu_memory_utilization") or DEFAULT_GPU_MEMORY)
    s.max_model_len = training.get("vllm_max_model_length")
    s.vllm_model_impl = training.get("vllm_model_impl") or "vllm"
    s.dtype = cfg.model.dtype if cfg.model.dtype and cfg.model.dtype != "auto" else "auto"
    s.trust_remote_code = bool(cfg.model.trust_remote_code)
    overrides = {"host": host, "port": port, "tensor_parallel_size": tensor_parallel_size,
                 "data_parallel_size": data_parallel_size, "gpu_memory_utilization": gpu_memory_utilization}
    for key, value in overrides.items():
        if value is not None:
            setattr(s, key, value)
    check(s)
    return s


def check(s: ServeSettings) -> None:
    if not 0 < s.gpu_memory_utilization <= 1:
        raise ConfigError(f"gpu memory utilization {s.gpu_memory_utilization} must be in (0, 1], e.g. 0.9")
    if not 0 < s.port < 65536:
        raise ConfigError(f"port {s.port} is not a TCP port (1-65535)")
    for key in ("tensor_parallel_size", "data_parallel_size"):
        if getattr(s, key) < 1:
            raise ConfigError(f"{key} must be at least 1, got {getattr(s, key)}")
    if not s.host:
        raise ConfigError("the server host is empty: use 127.0.0.1 (this machine only) or an address to listen on")


def build_command(s: ServeSettings, extra_args: list[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment) that start the server, built by TRL itself so its trainer can talk to it."""
    from trl.scripts.vllm_serve import ScriptArguments, build_command as trl_build_command

    args = ScriptArguments(
        model=s.model,
        host=s.host,
        port=s.port,
        tensor_parallel_size=s.tensor_parallel_size,
        data_parallel_size=s.data_parallel_size,
        gpu_memory_utilization=s.gpu_memory_utilization,
        max_model_len=s.max_model_len,
        dtype=s.dtype,
        vllm_model_impl=s.vllm_model_impl,
        trust_remote_code=s.trust_remote_code,
    )
    # TRL's weight-sync and cache-reset endpoints live behind vLLM's dev mode.
    return trl_build_command(args, extra_args), {"VLLM_SERVER_DEV_MODE": "1"}


def exposed_warning(s: ServeSettings) -> str | None:
    if s.host in ("127.0.0.1", "localhost", "::1"):
        return None
    return (f"the server listens on {s.host}: anyone who can reach port {s.port} there can replace the model's "
            "weights. Keep it on a private network, or use 127.0.0.1.")
