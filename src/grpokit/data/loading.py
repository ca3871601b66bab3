"""validate_data (cheap, before any model loads) and load_data (the train/eval data sets)."""
from __future__ import annotations

from contextlib import contextmanager

from grpokit.data import files, gold, synthetic
from grpokit.data.config import DataConfig, Source, check_fields, parse_source
from grpokit.data.locations import RowLocator
from grpokit.errors import ConfigError


def _available_columns(cfg: DataConfig, src: Source) -> list[str] | None:
    """Columns the source has, or None when only loading can tell (hub data sets)."""
    if src.kind == "synthetic":
        synthetic.resolve_params(src.name, src.params, cfg.seed)
        return list(synthetic.task(src.name).columns)
    if src.kind == "file":
        return files.columns_of(src.name, src.fmt)
    return None


def _check_columns(cfg: DataConfig, available: list[str], where: str) -> None:
    wanted = [("data.prompt_column", cfg.prompt_column)]
    if cfg.answer_column:
        wanted.append(("data.answer_column", cfg.answer_column))
    wanted += [("data.columns", col) for col in cfg.columns]
    wanted += [("data.list_columns", col) for col in cfg.list_columns]
    if cfg.context_column:
        wanted.append(("data.context_column", cfg.context_column))
    missing = [(key, col) for key, col in wanted if col not in available]
    if missing:
        named = "; ".join(f"{key} names `{col}`" for key, col in missing)
        raise ConfigError(f"{where} lacks columns: {named}. Its columns are: {', '.join(available)}")


def validate_data(cfg: DataConfig) -> None:
    """Raise ConfigError (saying what to change) if `cfg` cannot give a data set.

    Reads only file headers; hub data sets are checked for form here and for
    columns when loaded.
    """
    check_fields(cfg)
    src = parse_source(cfg.source)
    available = _available_columns(cfg, src)
    if available is not None:
        _check_columns(cfg, available, cfg.source)


def _raw(cfg: DataConfig, src: Source):
    import datasets

    if src.kind == "synthetic":
        n = cfg.max_samples  # generate only what will be used
        params = src.params
        if n is not None:
            given = dict(src.params)
            given["n"] = str(min(n, int(given.get("n", synthetic.task(src.name).params["n"]))))
            params = tuple(given.items())
        return datasets.Dataset.from_list(synthetic.generate(src.name, params, cfg.seed))
    if src.kind == "file":
        return files.load_file(src.name, src.fmt)
    from grpokit.data.hub import load_hub

    return load_hub(src.name, src.config, cfg.split)


def _eval_rows(eval_size: float | int, total: int) -> int:
    if eval_size == 0:
        return 0
    n = eval_size if isinstance(eval_size, int) else max(1, round(eval_size * total))
    if n >= total:
        raise ConfigError(f"data.eval_size {eval_size} holds back {n} of {total} rows and leaves none to train on: lower it, or set it to 0")
    return n


@contextmanager
def _quiet():
    # Prompt building and file loading take well under a second for prompt data
    # sets; their progress bars are noise in the training output.
    import datasets

    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def load_data(cfg: DataConfig):
    """(train, eval) datasets.Dataset with `prompt`, `answer` and the reward columns.

    eval is None when data.eval_size is 0. The split depends only on the rows
    and data.seed, so `grpokit eval` later sees exactly the prompts training
    never saw.
    """
    validate_data(cfg)
    if parse_source(cfg.source).kind == "hf":
        return _load(cfg)  # a hub download is slow enough that its progress bar helps
    with _quiet():
        return _load(cfg)


def _load(cfg: DataConfig):
    src = parse_source(cfg.source)
    ds = _raw(cfg, src)
    _check_columns(cfg, ds.column_names, cfg.source)
    if cfg.max_samples is not None and len(ds) > cfg.max_samples:
        ds = ds.select(range(cfg.max_samples))
    if len(ds) == 0:
        raise ConfigError(f"{cfg.source} has no rows; add at least one prompt (or raise data.max_samples)")
    passthrough = synthetic.task(src.name).passthrough if src.kind == "synthetic" else ()
    from grpokit.data.prompts import to_training_rows

    locate = RowLocator(src.name if src.kind == "file" else None, src.fmt, label=cfg.source)
    ds = to_training_rows(ds, cfg, passthrough, locate)
    if cfg.answer_column and cfg.require_answers:
        missing = gold.missing_rows(ds["answer"])
        if missing:
            raise ConfigError(gold.refusal(cfg.source, cfg.answer_column, missing, len(ds)))
    n_eval = _eval_rows(cfg.eval_size, len(ds))
    if n_eval == 0:
        return ds, None
    parts = ds.train_test_split(test_size=n_eval, seed=cfg.seed, shuffle=True)
    return parts["train"], parts["test"]
