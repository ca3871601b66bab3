"""grpokit.data: sources, validation messages, prompt building, the held-out split."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest

from grpokit.data import DataConfig, DEFAULT_SYSTEM_PROMPT, build_prompt, load_data, parse_source, reduce_answer, validate_data
from grpokit.data import synthetic
from grpokit.errors import ConfigError


def write(path, text: str, encoding="utf-8"):
    path.write_text(text, encoding=encoding)
    return str(path)


# --- parsing the source string ------------------------------------------------

@pytest.mark.parametrize(
    "source, kind, name, extra",
    [
        ("synthetic:arithmetic", "synthetic", "arithmetic", ()),  # the default demo task
        ("synthetic:arithmetic?digits=3&steps=2", "synthetic", "arithmetic", (("digits", "3"), ("steps", "2"))),  # query parameters, in order
        ("hf:openai/gsm8k:main", "hf", "openai/gsm8k", "main"),  # hub id with a config name
        ("hf:openai/gsm8k", "hf", "openai/gsm8k", None),  # config is optional
        ("data/train.jsonl", "file", "data/train.jsonl", "json"),  # a relative path
        ("x.JSON", "file", "x.JSON", "json"),  # suffixes are case-insensitive
        ("file:x.parquet", "file", "x.parquet", "parquet"),  # explicit file: scheme
        ("C:\\data\\qa.csv", "file", "C:\\data\\qa.csv", "csv"),  # a Windows drive is not a scheme
    ],
)
def test_parse_source(source, kind, name, extra):
    src = parse_source(source)
    assert (src.kind, src.name) == (kind, name)
    if kind == "synthetic":
        assert src.params == extra
    elif kind == "hf":
        assert src.config == extra
    else:
        assert src.fmt == extra


@pytest.mark.parametrize(
    "source, needle",
    [
        ("s3:bucket/data.csv", "unknown scheme `s3:`"),  # a scheme we do not read
        ("notes.txt", "cannot read `.txt` files"),  # unsupported file type
        ("hf:", "hf:<owner>/<name>"),  # no hub name
        ("hf:a/b/c", "hf:<owner>/<name>"),  # too many slashes
        ("synthetic:", "needs a task name"),  # no task
        ("synthetic:arithmetic?digits", "parameters must look like"),  # malformed query
    ],
)
def test_parse_source_errors(source, needle):
    with pytest.raises(ConfigError, match=needle.replace("?", r"\?").replace("(", r"\(")):
        parse_source(source)


# --- the config's own checks ------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"eval_size": 1.5}, "fraction outside"),  # a share must be below 1
        ({"eval_size": -3}, "negative"),  # a count cannot be negative
        ({"eval_size": True}, "fraction like 0.1"),  # YAML `yes` is not a size
        ({"eval_size": "10%"}, "fraction like 0.1"),  # strings are not sizes
        ({"max_samples": 0}, "positive integer"),  # zero rows cannot train
        ({"columns": {"x": "prompts"}}, "TRL passes to rewards itself"),  # would shadow TRL's own kwarg
        ({"columns": {"gold": "answer"}}, "answer_column already fills"),  # two sources for `answer`
        ({"columns": ["tests"]}, "must map dataset column"),  # a list is not a mapping
        ({"source": " "}, "data.source is empty"),  # nothing to load
        ({"require_answers": "yes"}, "true or false"),  # a flag, not text
    ],
)
def test_config_field_errors(kwargs, needle):
    with pytest.raises(ConfigError, match=needle):
        DataConfig(**kwargs)


def test_defaults_are_the_documented_interface():
    cfg = DataConfig()
    assert (cfg.source, cfg.prompt_column, cfg.answer_column, cfg.columns) == ("synthetic:arithmetic", "question", "answer", {})
    assert "<reasoning>" in cfg.system_prompt and "<answer>" in cfg.system_prompt
    assert (cfg.conversational, cfg.eval_size, cfg.max_samples, cfg.seed, cfg.split) == (True, 0.1, None, 42, "train")


# --- validate_data: cheap checks with messages that say what to change ----------------

def test_validate_errors_name_the_fix(tmp_path):
    bad_utf8 = tmp_path / "latin1.csv"
    bad_utf8.write_bytes("question,answer\ncaf\xe9,1\n".encode("latin-1"))
    made_dir = tmp_path / "folder.jsonl"  # a directory that looks like a file
    made_dir.mkdir()
    cases = [
        # a missing file names the path and where it looked from
        (DataConfig(source=str(tmp_path / "nope.jsonl")), "data file not found"),
        # a directory is not a data file
        (DataConfig(source=str(tmp_path) + "/"), "cannot read `no suffix` files"),
        (DataConfig(source=str(made_dir)), "is a directory"),
        # an empty CSV has no header to name columns
        (DataConfig(source=write(tmp_path / "empty.csv", "")), "no header row"),
        # not UTF-8: say how to fix it
        (DataConfig(source=str(bad_utf8)), "not UTF-8"),
        # JSON Lines whose first line is not JSON
        (DataConfig(source=write(tmp_path / "bad.jsonl", "question: 1\n")), "first line is not a JSON object"),
        # records must be objects
        (DataConfig(source=write(tmp_path / "list.jsonl", "[1, 2]\n")), "records must be JSON objects"),
        # an empty JSON file
        (DataConfig(source=write(tmp_path / "empty.jsonl", "\n\n")), "the file is empty"),
        # a column that is not there: list the ones that are
        (DataConfig(source=write(tmp_path / "qa.csv", "q,a\nhi,1\n")), "data.prompt_column names `question`.*Its columns are: q, a"),
        # the mapping's source columns are checked too
        (DataConfig(source=write(tmp_path / "qa2.csv", "question,answer\nhi,1\n"), columns={"test_code": "tests"}), "data.columns names `test_code`"),
        # synthetic: unknown task, unknown parameter, bad values
        (DataConfig(source="synthetic:sudoku"), "unknown synthetic task `sudoku`.*synthetic:arithmetic"),
        (DataConfig(source="synthetic:arithmetic?level=3"), "no parameter `level`: valid ones are digits, n, ops, seed, steps"),
        (DataConfig(source="synthetic:arithmetic?digits=9"), "out of range: use 1 to 6"),
        (DataConfig(source="synthetic:arithmetic?n=many"), "must be a whole number"),
        (DataConfig(source="synthetic:arithmetic?ops=add,pow"), "use a comma list of add, sub, mul, div"),
        (DataConfig(source="synthetic:addition?wording=fancy"), "wording='fancy': use one of plain, varied"),
        (DataConfig(source="synthetic:addition?digits=5"), "out of range: use 1 to 4"),
        # synthetic columns are known without generating the data set
        (DataConfig(source="synthetic:arithmetic", prompt_column="problem"), "Its columns are: question, answer, expression"),
    ]
    for cfg, needle in cases:
        with pytest.raises(ConfigError, match=needle):
            validate_data(cfg)


def test_validate_catches_a_field_changed_after_construction():
    # The training config applies --set overrides by assignment, after __post_init__.
    cfg = DataConfig()
    cfg.eval_size = 2.0
    with pytest.raises(ConfigError, match="fraction outside"):
        validate_data(cfg)


def test_validate_reads_only_the_first_record(tmp_path):
    # A broken second line proves validation never parsed the whole file; loading does, and says so.
    path = write(tmp_path / "big.jsonl", json.dumps({"question": "q", "answer": "1"}) + "\n{broken\n")
    validate_data(DataConfig(source=path))
    with pytest.raises(ConfigError, match=r"big.jsonl:2: not valid JSON"):
        load_data(DataConfig(source=path))


def test_validate_does_not_import_datasets():
    # validate_data runs before any model loads, from `grpokit train --dry-run` too: keep it light.
    code = (
        "import sys; from grpokit.data import DataConfig, validate_data; "
        "validate_data(DataConfig(source='synthetic:json?fields=5')); "
        "print('datasets' in sys.modules, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- answers and prompts --------------------------------------------------------------

@pytest.mark.parametrize(
    "value, expected",
    [
        ("Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 72", "72"),  # GSM8K worked solution
        ("so the total is\n#### 67,500", "67500"),  # GSM8K thousands separators
        ("#### 1,5", "1,5"),  # not a thousands pattern: left alone
        ("\\frac{1}{2}", "\\frac{1}{2}"),  # LaTeX answers untouched
        (72, "72"),  # CSV readers give ints
        (72.0, "72"),  # ... or floats
        (0.25, "0.25"),  # a real fraction stays
        (float("nan"), None),  # an empty CSV cell: unscorable, not "nan"
        ("nan", None),  # the same cell exported as text
        ("  ", None),  # blank text: nothing to compare against
        ("####", None),  # a GSM8K marker with no number after it
        (None, None),  # missing gold answer
        (True, "true"),  # booleans as JSON spells them
        (["4", "four"], '["4", "four"]'),  # lists as JSON text
    ],
)
def test_reduce_answer(value, expected):
    assert reduce_answer(value) == expected


@pytest.mark.parametrize(
    "question, system, conversational, expected",
    [
        ("2+2?", "S", True, [{"role": "system", "content": "S"}, {"role": "user", "content": "2+2?"}]),  # chat with a system turn
        ("2+2?", None, True, [{"role": "user", "content": "2+2?"}]),  # no system prompt, no system turn
        ("2+2?", "S", False, "S\n\n2+2?"),  # plain text: system prompt prepended
        ("2+2?", "", False, "2+2?"),  # empty system prompt adds nothing
        ([{"role": "user", "content": "hi"}], "S", True, [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]),  # messages get the system prompt
        ([{"role": "system", "content": "X"}, {"role": "user", "content": "hi"}], "S", True, [{"role": "system", "content": "X"}, {"role": "user", "content": "hi"}]),  # ... unless they have their own
    ],
)
def test_build_prompt(question, system, conversational, expected):
    assert build_prompt(question, system, conversational, 0) == expected


@pytest.mark.parametrize(
    "question, conversational, needle",
    [
        ("", True, "row 3: the prompt column is empty"),  # empty prompts are named by row
        (None, False, "row 3: the prompt column is empty"),  # missing too
        ([{"role": "user", "content": "x"}], False, "set data.conversational: true"),  # messages need chat mode
        ([1, 2], True, "not chat messages"),  # a list of something else
    ],
)
def test_build_prompt_errors(question, conversational, needle):
    with pytest.raises(ConfigError, match=needle):
        build_prompt(question, "S", conversational, 3)


# --- synthetic tasks ------------------------------------------------------------------------

@pytest.mark.parametrize(
    "query",
    [
        "digits=1&steps=1&ops=add,sub",  # the easiest setting
        "digits=2&steps=3&ops=add,sub,mul,div",  # every operation, chained
        "digits=3&steps=4&ops=div",  # division only: must fall back when no divisor exists
        "digits=1&steps=2&ops=sub",  # subtraction only: running value can reach 0
    ],
)
def test_arithmetic_gold_answers_are_right(query):
    params = tuple(pair.split("=") for pair in query.split("&"))
    rows = synthetic.generate("arithmetic", tuple(map(tuple, params)) + (("n", "300"),), seed=1)
    assert len(rows) == 300
    for row in rows:
        value = eval(row["expression"].replace("/", "//"))  # the expression is built with exact division
        assert str(value) == row["answer"] and value >= 0, row
        assert row["question"].endswith("have now?")
    # The chained steps show up in the text.
    steps = int(dict(params)["steps"])
    assert all(row["question"].count("Then ") == steps - 1 for row in rows)


def test_arithmetic_division_is_exact_in_the_text():
    rows = synthetic.generate("arithmetic", (("ops", "div"), ("n", "200")), seed=3)
    for row in rows:
        a, b = (int(x) for x in row["expression"].split(" / "))
        assert a % b == 0 and str(a // b) == row["answer"]


def test_synthetic_is_deterministic_by_seed():
    first = synthetic.generate("arithmetic", (("n", "50"),), seed=7)
    assert first == synthetic.generate("arithmetic", (("n", "50"),), seed=7)  # same seed, same rows
    assert first != synthetic.generate("arithmetic", (("n", "50"),), seed=8)  # a new seed, new rows
    # ?seed= overrides data.seed, so a config can pin the task while the split seed changes.
    assert first == synthetic.generate("arithmetic", (("n", "50"), ("seed", "7")), seed=99)


def test_json_task_gold_matches_its_schema_and_text():
    rows = synthetic.generate("json", (("n", "200"), ("fields", "5")), seed=0)
    for row in rows:
        gold, schema = json.loads(row["answer"]), json.loads(row["schema"])
        jsonschema.validate(gold, schema)
        assert set(gold) == set(schema["required"]) and len(gold) == 5
        # Every string value and every number is stated in the text (the task is solvable).
        for key, value in gold.items():
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                assert str(value) in row["question"], (key, row)


def test_json_task_passes_schema_to_rewards():
    train, held_out = load_data(DataConfig(source="synthetic:json?n=20", eval_size=4))
    assert set(train.column_names) == {"prompt", "answer", "schema"}
    assert len(train) == 16 and len(held_out) == 4


# --- load_data ---------------------------------------------------------------------------------

def test_load_synthetic_default():
    train, held_out = load_data(DataConfig(source="synthetic:arithmetic?n=100"))
    assert (len(train), len(held_out)) == (90, 10)
    assert set(train.column_names) == {"prompt", "answer"}
    row = train[0]
    assert row["prompt"][0] == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    assert row["prompt"][1]["role"] == "user" and row["answer"].isdigit()


def test_max_samples_limits_synthetic_generation():
    train, held_out = load_data(DataConfig(source="synthetic:arithmetic", max_samples=30, eval_size=0))
    assert len(train) == 30 and held_out is None


def test_gsm8k_from_shared_data(shared_data):
    cfg = DataConfig(source=str(shared_data / "gsm8k_train.jsonl"), eval_size=0.1)
    train, held_out = load_data(cfg)
    assert len(train) + len(held_out) == 7473 and len(held_out) == 747
    # Every gold answer is reduced to the number after ####, thousands separators gone.
    for answer in list(train["answer"]) + list(held_out["answer"]):
        float(answer)
    assert "67500" in list(train["answer"]) + list(held_out["answer"])
    # The split is fixed by the seed and disjoint.
    train_q = {p[-1]["content"] for p in train["prompt"]}
    held_q = [p[-1]["content"] for p in held_out["prompt"]]
    assert not train_q & set(held_q)
    assert held_q == [p[-1]["content"] for p in load_data(cfg)[1]["prompt"]]
    cfg.seed = 43
    assert held_q != [p[-1]["content"] for p in load_data(cfg)[1]["prompt"]]


def test_csv_with_column_mapping_and_plain_prompts(tmp_path):
    path = write(tmp_path / "code.csv", 'task,gold,test_code,notes\n"Add 2 and 3",5,"assert f(2,3)==5",x\n"Sub",1,"assert g()==1",y\n"Mul",6,"t",z\n')
    cfg = DataConfig(source=path, prompt_column="task", answer_column="gold", columns={"test_code": "tests"}, conversational=False, system_prompt="Be brief.", eval_size=1)
    train, held_out = load_data(cfg)
    rows = sorted(list(train) + list(held_out), key=lambda r: r["answer"])
    # Only the mapped columns survive; the integer gold answer is text.
    assert set(train.column_names) == {"prompt", "answer", "tests"}
    assert rows[0] == {"prompt": "Be brief.\n\nSub", "answer": "1", "tests": "assert g()==1"}
    assert [r["answer"] for r in rows] == ["1", "5", "6"]


def test_no_answer_column(tmp_path):
    # Summarization data has a reference, not a gold answer.
    path = write(tmp_path / "sum.jsonl", "\n".join(json.dumps({"document": f"doc {i}", "summary": f"s{i}"}) for i in range(5)))
    train, _ = load_data(DataConfig(source=path, prompt_column="document", answer_column=None, columns={"summary": "reference"}, eval_size=0))
    assert set(train.column_names) == {"prompt", "reference"}


def test_json_array_and_parquet_files(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [{"question": f"q{i}", "answer": i} for i in range(6)]
    json_path = write(tmp_path / "arr.json", json.dumps(records, indent=2))
    parquet_path = str(tmp_path / "t.parquet")
    pq.write_table(pa.Table.from_pylist(records), parquet_path)
    for path in (json_path, parquet_path):
        validate_data(DataConfig(source=path))
        train, held_out = load_data(DataConfig(source=path, eval_size=2))
        assert sorted(list(train["answer"]) + list(held_out["answer"])) == [str(i) for i in range(6)]


def test_chat_message_prompts(tmp_path):
    rows = [{"prompt": [{"role": "user", "content": f"hi {i}"}], "answer": "x"} for i in range(3)]
    path = write(tmp_path / "chat.jsonl", "\n".join(json.dumps(r) for r in rows))
    train, _ = load_data(DataConfig(source=path, prompt_column="prompt", eval_size=0, system_prompt="S"))
    assert train[0]["prompt"] == [{"role": "system", "content": "S"}, {"role": "user", "content": "hi 0"}]


@pytest.mark.parametrize(
    "eval_size, rows, expected",
    [
        (0, 10, None),  # no held-out split
        (0.25, 10, 2),  # a share, rounded (2.5 -> 2, banker's rounding)
        (0.01, 10, 1),  # a tiny share still holds back one row
        (3, 10, 3),  # a row count
    ],
)
def test_eval_sizes(tmp_path, eval_size, rows, expected):
    path = write(tmp_path / "d.jsonl", "\n".join(json.dumps({"question": f"q{i}", "answer": i}) for i in range(rows)))
    train, held_out = load_data(DataConfig(source=path, eval_size=eval_size))
    assert (None if held_out is None else len(held_out)) == expected
    assert len(train) == rows - (expected or 0)


def test_eval_size_that_leaves_nothing_to_train(tmp_path):
    path = write(tmp_path / "d.jsonl", "\n".join(json.dumps({"question": f"q{i}", "answer": i}) for i in range(4)))
    with pytest.raises(ConfigError, match="leaves none to train on"):
        load_data(DataConfig(source=path, eval_size=4))


def test_max_samples_takes_the_first_rows(tmp_path):
    path = write(tmp_path / "d.jsonl", "\n".join(json.dumps({"question": f"q{i}", "answer": i}) for i in range(20)))
    train, _ = load_data(DataConfig(source=path, max_samples=5, eval_size=0))
    assert sorted(train["answer"]) == ["0", "1", "2", "3", "4"]


def test_hub_without_network_is_a_clear_error(tmp_path):
    # Offline mode fails at once (no retries); the message says how to get the data another way.
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path), "HF_DATASETS_CACHE": str(tmp_path / "ds")}
    code = (
        "from grpokit.data import DataConfig, load_data\n"
        "from grpokit.errors import ConfigError, RunError\n"
        "try:\n"
        "    load_data(DataConfig(source='hf:openai/gsm8k:main'))\n"
        "except (ConfigError, RunError) as e:\n"
        "    print(type(e).__name__ + ': ' + str(e))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.startswith("RunError: hf:openai/gsm8k:main: could not reach the Hugging Face hub"), out.stdout + out.stderr
    assert "load_dataset('openai/gsm8k', 'main')" in out.stdout


def test_synthetic_addition_prompts_end_where_the_answer_goes():
    from grpokit.data import synthetic

    plain = synthetic.generate("addition", (("n", "50"),), 3)
    for row in plain:
        a, b = (int(x) for x in row["expression"].split(" + "))
        assert 10 <= a <= 99 and 10 <= b <= 99 and row["answer"] == str(a + b)
        # The question, then the answer line left open at "=": the model's first number is its answer.
        assert row["question"] == f"Question: What is {a} + {b}?\nAnswer: {a} + {b} ="
    varied = synthetic.generate("addition", (("n", "200"), ("wording", "varied"), ("digits", "3")), 3)
    assert len({r["question"].split("\n")[0].split(" ")[1] for r in varied}) >= 4  # several wordings
    assert all(100 <= int(r["expression"].split(" + ")[0]) <= 999 for r in varied)
    assert all(r["question"].endswith(f"Answer: {r['expression']} =") for r in varied)
    # Same parameters and seed, same rows.
    assert synthetic.generate("addition", (("n", "50"),), 3) == plain


def test_synthetic_addition_shapes_say_less_than_the_sum():
    from grpokit.data import synthetic

    params = (("n", "60"), ("wording", "varied"))
    restated = synthetic.generate("addition", params, 5)
    opened = synthetic.generate("addition", params + (("shape", "open"),), 5)
    bare = synthetic.generate("addition", params + (("shape", "bare"),), 5)
    # Same seed, same sums and wordings; only where the prompt stops differs.
    assert [r["expression"] for r in opened] == [r["expression"] for r in restated] == [r["expression"] for r in bare]
    for r, o, b in zip(restated, opened, bare):
        assert o["question"] == r["question"].rsplit(" ", 4)[0] and o["question"].endswith("\nAnswer:")
        assert r["expression"] not in o["question"].split("\n")[1]  # the answer line gives nothing away
        assert b["question"] == f"{r['expression']} ="
    mixed = synthetic.generate("addition", (("n", "300"), ("shape", "mixed")), 5)
    kinds = {"open" if r["question"].endswith("Answer:") else "bare" if "\n" not in r["question"] else "restated"
             for r in mixed}
    assert kinds == {"open", "bare", "restated"}
    with pytest.raises(ConfigError, match="shape='chat': use one of restated, open, bare, mixed"):
        load_data(DataConfig(source="synthetic:addition?shape=chat"))


def test_synthetic_addition_shape_lists_and_the_practice_wording():
    from grpokit.data import synthetic, synthetic_sums

    rows = synthetic.generate("addition", (("n", "300"), ("wording", "practice"), ("shape", "restated,open")), 5)
    kinds = {"open" if r["question"].endswith("Answer:") else "restated" for r in rows}
    assert kinds == {"open", "restated"} and all("\n" in r["question"] for r in rows)  # no bare line drawn
    # Practice wordings share no key word with the held-out `varied` family.
    practice = " ".join(synthetic_sums.PRACTICE).lower()
    for word in ("add", "plus", "sum", "finds", "in all", "holds"):
        assert word not in practice, word
    assert not set(synthetic_sums.PRACTICE) & set(synthetic_sums.VARIED)
    with pytest.raises(ConfigError, match="comma list of restated, open, bare"):
        load_data(DataConfig(source="synthetic:addition?shape=restated,chat"))


def test_synthetic_addition_hands_its_expression_to_rewards():
    cfg = DataConfig(source="synthetic:addition?n=20&shape=open", conversational=False, system_prompt=None, eval_size=0)
    train_set, _ = load_data(cfg)
    row = train_set[0]
    assert row["expression"].replace(" ", "").replace("+", "").isdigit()
    a, b = (int(x) for x in row["expression"].split(" + "))
    assert str(a + b) == row["answer"]


def test_synthetic_addition_loads_as_plain_text_prompts():
    cfg = DataConfig(source="synthetic:addition?n=20", conversational=False, system_prompt=None, eval_size=5)
    train_set, eval_set = load_data(cfg)
    assert len(train_set) == 15 and len(eval_set) == 5
    assert isinstance(train_set[0]["prompt"], str) and train_set[0]["prompt"].endswith("=")
