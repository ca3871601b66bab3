"""Data sets for GRPO: synthetic tasks, the HF hub, local CSV/JSONL/JSON/Parquet.

    from grpokit.data import DataConfig, validate_data, load_data
    cfg = DataConfig(source="synthetic:arithmetic?digits=2&n=2000")
    validate_data(cfg)              # cheap: raises ConfigError saying what to change
    train, held_out = load_data(cfg)

Every data set comes out with a `prompt` column (chat messages, or a string
when data.conversational is false), an `answer` column (the gold answer as
text) and the columns named in data.columns under their reward keyword names.
"""
from grpokit.data.config import DEFAULT_SYSTEM_PROMPT, DataConfig, parse_source  # noqa: F401
from grpokit.data.loading import load_data, validate_data  # noqa: F401
from grpokit.data.prompts import build_prompt, reduce_answer  # noqa: F401
from grpokit.data.synthetic import TASKS as SYNTHETIC_TASKS  # noqa: F401
