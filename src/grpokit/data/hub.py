"""Data sets from the Hugging Face hub (`hf:<owner>/<name>[:<config>]`)."""
from __future__ import annotations

from grpokit.errors import ConfigError, RunError


def load_hub(name: str, config: str | None, split: str):
    """datasets.load_dataset, with its many failure types turned into one line that says what to do."""
    import datasets

    try:
        ds = datasets.load_dataset(name, config, split=split)
    except Exception as exc:
        raise _explain(exc, name, config, split) from exc
    if isinstance(ds, (datasets.DatasetDict, datasets.IterableDataset, datasets.IterableDatasetDict)):
        raise ConfigError(f"hf:{name} split {split!r} did not give one in-memory data set; name a single split, e.g. data.split: train")
    return ds


def _explain(exc: Exception, name: str, config: str | None, split: str) -> Exception:
    text = f"{type(exc).__name__}: {exc}"
    source = f"hf:{name}" + (f":{config}" if config else "")
    lowered = text.lower()
    if "config" in lowered and ("missing" in lowered or "not found" in lowered or "available" in lowered):
        return ConfigError(f"{source}: bad config name ({text}); write it as hf:{name}:<config>")
    if "split" in lowered and ("unknown" in lowered or "not found" in lowered or "should be one of" in lowered):
        return ConfigError(f"{source}: no split {split!r} ({text}); set data.split to one that exists")
    network = isinstance(exc, (ConnectionError, TimeoutError)) or any(
        word in lowered for word in ("connection", "offline", "resolve", "timed out", "max retries", "network", "unreachable")
    )
    if network:
        return RunError(
            f"{source}: could not reach the Hugging Face hub ({text}). Download it where there is a connection "
            f"(python -c \"import datasets; datasets.load_dataset({name!r}, {config!r})\") and run with HF_DATASETS_OFFLINE=1, "
            "or save it as a .jsonl/.parquet file and point data.source at that"
        )
    if type(exc).__name__ in ("DatasetNotFoundError", "FileNotFoundError", "RepositoryNotFoundError"):
        return ConfigError(f"{source}: no such data set on the hub or in the local cache ({text}); check the name (owner/name)")
    return RunError(f"{source}: loading failed: {text}")
