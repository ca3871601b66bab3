"""The `data:` section of a run config, and how a `source` string is parsed."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

from grpokit.errors import ConfigError
from grpokit.answer_format import AnswerFormat

# The default answer format's prompt; a data config with another answer_format
# and this system prompt gets that format's prompt instead.
DEFAULT_SYSTEM_PROMPT = AnswerFormat().system_prompt()

# Keyword names TRL itself passes to reward functions: a data column renamed to
# one of them would be shadowed or would clash, so the mapping refuses them.
RESERVED_NAMES = frozenset({"prompt", "prompts", "completion", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric"})

FILE_SUFFIXES = {".csv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}
SCHEMES = ("synthetic", "hf", "file")


@dataclass
class DataConfig:
    """Where the prompts come from and how they become TRL's `prompt` column.

    source: `synthetic:<task>[?param=value&...]` (generated, no download; see
        grpokit.data.synthetic), `hf:<name>[:<config>]` (the Hugging Face hub),
        or a path to a .csv, .jsonl, .json or .parquet file.
    prompt_column: the column holding the question (a string, or a list of
        chat messages that is used as is).
    answer_column: the column holding the gold answer; it becomes `answer`.
        A GSM8K-style worked solution ending in `#### 72` is reduced to `72`.
        Set it to null for data without gold answers (e.g. summarization).
    columns: more columns to pass to the rewards, dataset column -> keyword
        name, e.g. {"test_code": "tests"}.
    list_columns: columns whose cells hold several items (grpokit.data.list_cells):
        a CSV cell is read as a JSON list or as items separated by
        `list_separator`. The column mapped onto `sources` and `context_column`
        are list columns without being named here.
    list_separator: what separates the items of a CSV list cell that is not a
        JSON list (default `|`).
    context_column: a list column whose items are shown in the prompt as
        numbered documents, `[1] ...`, above the question (knowledge-base QA:
        the numbers are what a `[1]` citation points to).
    system_prompt: prepended as a system message (or as text when
        `conversational` is false); null for none. The default asks for the
        answer format's shape.
    answer_format: how a completion marks its reasoning and its answer,
        {reasoning_tag: reasoning, answer_tag: answer} by default (reasoning_tag
        may be null: the answer block alone). Set once, it reaches every reward
        that reads the answer or checks the tags, evaluation (accuracy, format
        rate) and the default system prompt.
    conversational: prompts as chat messages (TRL applies the model's chat
        template) rather than plain strings.
    eval_size: the held-out share (0 < x < 1) or row count (int) kept back for
        `grpokit eval`; 0 for none. The split is fixed by `seed`.
    max_samples: use only the first N rows of the source (before the split).
    seed: seeds the split and the synthetic generators.
    split: the split of an `hf:` data set to read (`train`, `test[:500]`, ...).
    require_answers: stop loading when any row's gold answer is empty or
        unparsable (blank, NaN, "nan"); by default such rows are counted and
        reported (doctor, start of training) and rewards leave them unscored.
    drop_zero_variance_after: stop training on a prompt after this many of its
        groups had zero reward variance (DAPO-style dynamic sampling; one process
        only; see grpokit.data.zero_variance). Unset (the default) keeps every prompt.
    """

    source: str = "synthetic:arithmetic"
    prompt_column: str = "question"
    answer_column: str | None = "answer"
    columns: dict[str, str] = field(default_factory=dict)
    list_columns: list[str] = field(default_factory=list)
    list_separator: str = "|"
    context_column: str | None = None
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
    answer_format: AnswerFormat = field(default_factory=AnswerFormat)
    conversational: bool = True
    eval_size: float | int = 0.1
    max_samples: int | None = None
    seed: int = 42
    split: str = "train"
    require_answers: bool = False
    drop_zero_variance_after: int | None = None

    def __post_init__(self) -> None:
        try:
            self.answer_format = AnswerFormat.of(self.answer_format)
        except ValueError as exc:
            raise ConfigError(f"data.answer_format: {exc}") from None
        if self.system_prompt == DEFAULT_SYSTEM_PROMPT:
            self.system_prompt = self.answer_format.system_prompt()
        check_fields(self)


def check_fields(cfg: DataConfig) -> None:
    """Checks that need no file access; each message says what to write instead."""
    if not isinstance(cfg.source, str) or not cfg.source.strip():
        raise ConfigError("data.source is empty: give e.g. `synthetic:arithmetic`, `hf:openai/gsm8k:main` or a path to a .jsonl/.csv/.parquet file")
    if not isinstance(cfg.prompt_column, str) or not cfg.prompt_column:
        raise ConfigError("data.prompt_column must name the column that holds the question, e.g. `question`")
    if cfg.answer_column is not None and not isinstance(cfg.answer_column, str):
        raise ConfigError("data.answer_column must be a column name, or null when the data has no gold answer")
    if not isinstance(cfg.columns, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in cfg.columns.items()):
        raise ConfigError("data.columns must map dataset column -> reward keyword, e.g. {test_code: tests}")
    clash = sorted(set(cfg.columns.values()) & RESERVED_NAMES)
    if clash:
        raise ConfigError(f"data.columns maps onto {clash}, which TRL passes to rewards itself: pick another keyword name")
    if "answer" in cfg.columns.values() and cfg.answer_column:
        raise ConfigError("data.columns maps a column onto `answer`, which answer_column already fills: set answer_column to that column instead")
    if not isinstance(cfg.list_columns, list) or not all(isinstance(c, str) and c for c in cfg.list_columns):
        raise ConfigError("data.list_columns must list column names, e.g. [sources]")
    if not isinstance(cfg.list_separator, str) or not cfg.list_separator:
        raise ConfigError("data.list_separator must be the text between a CSV list cell's items, e.g. `|`")
    if cfg.context_column is not None and (not isinstance(cfg.context_column, str) or not cfg.context_column):
        raise ConfigError("data.context_column must name the column of documents shown in the prompt, or be null")
    eval_size = cfg.eval_size
    if isinstance(eval_size, bool) or not isinstance(eval_size, (int, float)):
        raise ConfigError(f"data.eval_size must be a fraction like 0.1 or a row count like 200, not {eval_size!r}")
    if isinstance(eval_size, float) and not (0.0 <= eval_size < 1.0):
        raise ConfigError(f"data.eval_size {eval_size} is a fraction outside [0, 1): use e.g. 0.1 (10% held out), or an integer row count")
    if isinstance(eval_size, int) and eval_size < 0:
        raise ConfigError(f"data.eval_size {eval_size} is negative: use 0 for no held-out split, or a positive row count")
    if cfg.max_samples is not None and (isinstance(cfg.max_samples, bool) or not isinstance(cfg.max_samples, int) or cfg.max_samples < 1):
        raise ConfigError(f"data.max_samples must be a positive integer or null (all rows), not {cfg.max_samples!r}")
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, int):
        raise ConfigError(f"data.seed must be an integer, not {cfg.seed!r}")
    if not isinstance(cfg.require_answers, bool):
        raise ConfigError(f"data.require_answers must be true or false, not {cfg.require_answers!r}")
    if not isinstance(cfg.split, str) or not cfg.split:
        raise ConfigError("data.split must name a split, e.g. `train`")
    from grpokit.data.zero_variance import check_after

    check_after(cfg.drop_zero_variance_after)


@dataclass(frozen=True)
class Source:
    """A parsed `source` string."""

    kind: str  # "synthetic" | "hf" | "file"
    name: str  # task name, hub id, or file path
    config: str | None = None  # hub config name
    params: tuple[tuple[str, str], ...] = ()  # synthetic parameters, in order
    fmt: str | None = None  # file format for kind == "file"


def parse_source(source: str) -> Source:
    """`synthetic:arithmetic?digits=2`, `hf:openai/gsm8k:main`, or a file path."""
    text = source.strip()
    scheme, sep, rest = text.partition(":")
    # A one-letter "scheme" is a Windows drive (C:\data.csv), not a scheme.
    if sep and len(scheme) > 1 and "/" not in scheme and "\\" not in scheme:
        if scheme == "synthetic":
            task, _, query = rest.partition("?")
            if not task:
                raise ConfigError("data.source `synthetic:` needs a task name, e.g. `synthetic:arithmetic`")
            try:
                params = tuple(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
            except ValueError:
                raise ConfigError(f"data.source {source!r}: parameters must look like `?digits=2&n=500`") from None
            return Source("synthetic", task, params=params)
        if scheme == "hf":
            name, _, config = rest.partition(":")
            if not name or name.count("/") > 1:
                raise ConfigError(f"data.source {source!r}: write a hub data set as `hf:<owner>/<name>[:<config>]`, e.g. `hf:openai/gsm8k:main`")
            return Source("hf", name, config=config or None)
        if scheme == "file":
            return _file_source(rest, source)
        if not Path(text).exists():
            raise ConfigError(
                f"data.source {source!r} has an unknown scheme `{scheme}:`; use `synthetic:<task>`, "
                "`hf:<owner>/<name>[:<config>]`, or a path to a .csv/.jsonl/.json/.parquet file"
            )
    return _file_source(text, source)


def _file_source(path: str, source: str) -> Source:
    suffix = Path(path).suffix.lower()
    fmt = FILE_SUFFIXES.get(suffix)
    if fmt is None:
        raise ConfigError(
            f"data.source {source!r}: cannot read `{suffix or 'no suffix'}` files; "
            "use a .csv, .jsonl, .json or .parquet file, `hf:<name>` or `synthetic:<task>`"
        )
    return Source("file", str(Path(path).expanduser()), fmt=fmt)


def list_columns_of(cfg: DataConfig) -> list[str]:
    """The data set's columns read as lists: named in list_columns, mapped onto `sources`, or the context column."""
    found = list(cfg.list_columns)
    found += [source for source, target in cfg.columns.items() if target == "sources"]
    if cfg.context_column:
        found.append(cfg.context_column)
    return list(dict.fromkeys(found))
