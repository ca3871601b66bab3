"""Hostile and careless input: each case ends in exit 2 and a message saying what to change.

Never a hang, never a traceback, never silent acceptance. One line per case; the
comment says what used to happen.
"""
from __future__ import annotations

import dataclasses
import re
import time

import pytest
import yaml
from typer.testing import CliRunner

from grpokit.cli import app

GOOD = (
    "name: t\n"
    "rewards: [{name: numeric_match}]\n"
    "training: {num_generations: 4, per_device_train_batch_size: 4}\n"
)
BOMB = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))


def training(**values) -> str:
    body = ", ".join(f"{k}: {v}" for k, v in {"num_generations": 4, "per_device_train_batch_size": 4, **values}.items())
    return f"name: t\nrewards: [{{name: numeric_match}}]\ntraining: {{{body}}}\n"


def invoke(args, monkeypatch, tmp_path):
    # Returns the CPU seconds the command took (in process: CliRunner), not wall time, so a loaded
    # machine cannot make a bound on it fail.
    monkeypatch.setenv("GRPOKIT_LOG_DIR", str(tmp_path / "logs"))
    started = time.process_time()
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result, time.process_time() - started


CONFIG_CASES = [
    (BOMB, r"expands to more than 100000 values through aliases"),  # billion laughs: ran past 120 s
    ("a: " + "[" * 20000 + "]" * 20000 + "\n", r"nested more than 64 levels"),  # RecursionError in read_yaml
    ("name: t\nname: u\nrewards: [{name: numeric_match}]\n", r"key 'name' appears twice.*first on line 1"),  # last one won silently
    ("a: &x [*x]\n", r"refers to a node that contains it"),  # a recursive alias: RecursionError later
    (b"name: t\xff\n", r"cfg.yaml:1: not UTF-8"),  # binary config, named with its line
    (training(per_device_train_batch_size=".nan"), r"per_device_train_batch_size is nan: give a finite"),  # ValueError in check_batch
    (training(max_steps=-4), r"max_steps is -4: it must be >= 1 \(or -1\)"),  # accepted by --dry-run
    (training(max_steps=".nan"), r"max_steps is nan"),  # accepted
    (training(max_steps="true"), r"max_steps must be a whole number.*bool"),  # YAML true is not a step count
    (training(learning_rate=-4), r"learning_rate is -4: it must be > 0 and <= 1"),  # accepted
    (training(learning_rate=".nan"), r"learning_rate is nan"),  # accepted
    (training(learning_rate=".inf"), r"learning_rate is inf"),  # accepted
    (training(learning_rate="true"), r"learning_rate must be a number"),  # accepted
    (training(learning_rate="1e-5x"), r"learning_rate must be a number.*str"),  # a typo in a number
    (training(per_device_train_batch_size=0), r"per_device_train_batch_size is 0: it must be >= 1"),  # accepted
    (training(per_device_train_batch_size=-4), r"per_device_train_batch_size is -4"),  # accepted
    (training(max_completion_length=0), r"max_completion_length is 0: it must be >= 1"),  # accepted
    (training(max_completion_length=-4), r"max_completion_length is -4"),  # accepted
    (training(max_completion_length=".nan"), r"max_completion_length is nan"),  # accepted
    (training(save_steps=0), r"save_steps is 0: it must be > 0"),  # accepted
    (training(save_steps=-4), r"save_steps is -4"),  # accepted
    (training(save_steps=".nan"), r"save_steps is nan"),  # accepted
    (training(save_steps=2.5), r"save_steps is 2.5: write a whole step count"),  # TRL fails on it at the first save
    (training(per_device_train_batch_size="null"), r"per_device_train_batch_size may not be null"),  # TypeError in check_batch
    (GOOD.replace("{name: numeric_match}", "{name: numeric_match, weight: .nan}"), r"rewards\[0\].weight is nan"),  # accepted
    (GOOD + "model: {lora: {r: 100000000}}\n", r"model.lora.r must be a rank from 1 to 4096"),  # accepted
    (GOOD + "stages: [{name: a, training: {temperature: 0}}]\n", r"stages\[0\].training.temperature is 0"),  # stages too
    (GOOD + "model: {lora: {alpha: -3}}\n", r"model.lora.alpha must be a positive number"),  # a negative scale was accepted
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("text, message", CONFIG_CASES)
def test_bad_config_exits_2_with_a_message(tmp_path, monkeypatch, text, message):
    path = tmp_path / "cfg.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    result, seconds = invoke(["train", path, "--dry-run"], monkeypatch, tmp_path)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and seconds < 30
    assert re.search(message, " ".join(result.output.split())), result.output


@pytest.mark.parametrize("override, message", [
    ("training.max_steps=-4", r"max_steps is -4"),  # --set goes through the same table
    ("training.learning_rate=.nan", r"learning_rate is nan"),
    ("training.max_steps=1e3", None),  # a whole float is a step count: accepted as 1000
])
def test_overrides_are_checked_like_the_file(tmp_path, monkeypatch, override, message):
    path = tmp_path / "cfg.yaml"
    path.write_text(GOOD)
    result, _ = invoke(["train", path, "--dry-run", "--set", override], monkeypatch, tmp_path)
    if message is None:
        assert result.exit_code == 0 and '"max_steps": 1000' in result.output, result.output
    else:
        assert result.exit_code == 2 and re.search(message, result.output), result.output


def jsonl(*lines: str) -> str:
    return "\n".join(lines) + "\n"


DATA_CASES = [
    ("d.csv", "question,answer\n", r"d.csv: has a header line but no rows"),  # was "corresponds to no data"
    ("d.jsonl", jsonl('{"question": "a", "answer": "1"}', '{"question": "b", "answer":', '{"question": "c", "answer": "3"}'),
     r"d.jsonl:2: not valid JSON"),  # was a generation error with no line number
    ("d.jsonl", jsonl('{"question": "a", "answer": "1"}', "[1, 2]"), r"d.jsonl:2: a list where a JSON object belongs"),
    ("d.jsonl", jsonl('{"question": "a", "answer": "1"}', "", "42"), r"d.jsonl:3: a number where a JSON object"),  # blank lines count
    ("d.csv", "question,answer\nq1,1\nq2,2,3\n", r"d.csv:3: 3 fields where the header has 2"),  # unquoted comma
    ("d.csv", b"question,answer\nq1,1\nq2,\xff\n", r"d.csv:3: not UTF-8"),  # binary in the body, not the header
]


@pytest.mark.parametrize("name, content, message", DATA_CASES)
def test_bad_data_file_names_the_line(tmp_path, name, content, message):
    from grpokit.data import DataConfig, load_data
    from grpokit.errors import ConfigError

    data = tmp_path / name
    data.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigError) as caught:
        load_data(DataConfig(source=str(data), eval_size=0))
    assert re.search(message, str(caught.value)), str(caught.value)


@pytest.mark.timeout(120)
def test_doctor_exits_2_on_bad_data(tmp_path, monkeypatch):
    # `doctor` loads the data before any model: bad data is bad input (exit 2), not a failed check.
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl('{"question": "a", "answer": "1"}', "{broken"))
    config = tmp_path / "cfg.yaml"
    config.write_text(GOOD + f"data: {{source: {data}, eval_size: 0}}\nprofile: cpu\n")
    result, _ = invoke(["doctor", config, "--no-probe"], monkeypatch, tmp_path)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "d.jsonl:2: not valid JSON" in " ".join(result.output.split())


def _gold_csv(tmp_path):
    path = tmp_path / "gold.csv"
    path.write_text("question,answer\nq1,nan\nq2,\nq3,  \nq4,4\nq5,5\n")
    return path


def test_empty_and_nan_gold_answers_are_counted(tmp_path):
    from grpokit.data import DataConfig, load_data
    from grpokit.data.gold import summary

    train, held_out = load_data(DataConfig(source=str(_gold_csv(tmp_path)), eval_size=0))
    assert list(train["answer"]) == [None, None, None, "4", "5"]  # "nan", empty and blank: no gold answer
    assert summary(train, held_out).startswith("3 of 5 rows have an empty or unparsable gold answer")


def test_require_answers_refuses_them_with_the_rows(tmp_path):
    from grpokit.data import DataConfig, load_data
    from grpokit.errors import ConfigError

    with pytest.raises(ConfigError, match=r"gold.csv: 3 of 5 rows .* column `answer` \(data rows 1, 2, 3,"):
        load_data(DataConfig(source=str(_gold_csv(tmp_path)), eval_size=0, require_answers=True))


def test_rewards_test_on_non_utf8_samples(tmp_path, monkeypatch):
    samples = tmp_path / "s.jsonl"
    samples.write_bytes(b'{"completion": "4", "answer": "4"}\n{"completion": "\xff"}\n')
    result, _ = invoke(["rewards", "test", samples, "--reward", "numeric_match"], monkeypatch, tmp_path)
    assert result.exit_code == 2 and "s.jsonl:2: not UTF-8" in result.output, result.output  # was UnicodeDecodeError


@pytest.mark.parametrize("metrics, alerts", [
    ('{"a": ' * 100000 + "1" + "}" * 100000, ""),  # RecursionError in diagnose.read_jsonl
    ('{"step": 1, "loss": 0.1}', '{"rule": ["x"], "step": 1}'),  # TypeError: an unhashable rule
])
def test_report_skips_corrupted_lines(tmp_path, monkeypatch, metrics, alerts):
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text(metrics + "\n")
    (run / "alerts.jsonl").write_text(alerts + "\n")
    result, _ = invoke(["report", run], monkeypatch, tmp_path)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert (run / "report.html").is_file()


def test_unexpected_exception_is_one_line_and_a_log(tmp_path, monkeypatch):
    # A bug anywhere below a command: one line naming the command and the log, exit 1.
    import grpokit.health.diagnose

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(grpokit.health.diagnose, "load_run", broken)
    (tmp_path / "run").mkdir()
    result, _ = invoke(["report", tmp_path / "run"], monkeypatch, tmp_path)
    assert result.exit_code == 1, result.output
    line = " ".join(result.output.split())
    assert "grpokit report failed unexpectedly (KeyError: 'boom')" in line and "Traceback" not in result.output
    logs = list((tmp_path / "logs").glob("grpokit-report-*.log"))
    assert len(logs) == 1 and "KeyError: 'boom'" in logs[0].read_text()


def test_every_trl_default_is_in_range():
    # The ranges must never refuse what TRL itself ships as the default.
    from trl import GRPOConfig

    from grpokit.config.training_fields import RANGES, check_value, field_kinds

    assert set(RANGES) <= set(field_kinds()), "a range for a field TRL does not have"
    for f in dataclasses.fields(GRPOConfig):
        if f.name in field_kinds():
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            check_value(f.name, default, "training")


def test_yaml_anchors_and_merge_keys_still_work(tmp_path, monkeypatch):
    # Limits stop abuse, not the ordinary uses of anchors.
    path = tmp_path / "cfg.yaml"
    path.write_text("name: t\nrewards: [{name: numeric_match}]\n"
                    "training: &t {num_generations: 4, per_device_train_batch_size: 4, max_steps: 5}\n"
                    "stages:\n  - {name: a, training: {<<: *t, max_steps: 3}}\n")
    result, _ = invoke(["train", path, "--dry-run"], monkeypatch, tmp_path)
    assert result.exit_code == 0, result.output
    resolved = yaml.safe_load(result.output.split("# GRPOConfig")[0].split("# resolved config", 1)[1])
    assert resolved["stages"][0]["training"]["max_steps"] == 3


# --- fuzzing: random configs and data files never crash, hang or pass silently -------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from grpokit.config.training_fields import RANGES  # noqa: E402

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                       max_leaves=8)
# Keys a config really has, so the fuzz reaches validation rather than stopping at "unknown key".
_TRAINING = st.dictionaries(st.sampled_from(sorted(RANGES)), _SCALARS, max_size=4)
_CONFIG = st.fixed_dictionaries(
    {"name": st.just("fuzz"), "rewards": st.just([{"name": "numeric_match"}])},
    optional={
        "training": _TRAINING,
        "model": st.fixed_dictionaries({}, optional={"lora": st.one_of(st.none(), st.dictionaries(
            st.sampled_from(["r", "alpha", "dropout"]), _SCALARS, max_size=3)), "max_seq_length": _SCALARS}),
        "data": st.fixed_dictionaries({}, optional={"eval_size": _SCALARS, "max_samples": _SCALARS,
                                                    "require_answers": _SCALARS, "seed": _SCALARS}),
        "stages": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["a", "b"])},
                                                 optional={"max_steps": _SCALARS, "training": _TRAINING}), max_size=2),
        "profile": st.sampled_from(["cpu", "memory", "none", "gpu"]),
        "extra": _VALUES,
    },
)


def _assert_clean_exit(result, ok_codes=(0, 2)):
    assert result.exit_code in ok_codes, result.output
    assert "Traceback" not in result.output and "failed unexpectedly" not in result.output, result.output
    if result.exit_code == 2:
        assert result.output.strip(), "exit 2 without a message"


@pytest.mark.timeout(120)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=_CONFIG)
def test_fuzz_config_mappings(tmp_path, monkeypatch, config):
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config))
    result, seconds = invoke(["train", path, "--dry-run"], monkeypatch, tmp_path)
    _assert_clean_exit(result)
    assert seconds < 20


_LINES = st.lists(st.one_of(
    st.binary(max_size=20),
    st.sampled_from([b'{"question": "q", "answer": "1"}', b"question,answer", b"q,1", b"q,", b"[1]", b"{", b'"x"',
                     b'{"question": null, "answer": 2}', b"\xff\xfe", b"a,b,c", b'{"question": "q", "answer": NaN}']),
), max_size=6)


@pytest.mark.timeout(120)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_LINES, suffix=st.sampled_from([".csv", ".jsonl"]))
def test_fuzz_data_files(tmp_path, lines, suffix):
    from grpokit.data import DataConfig, load_data
    from grpokit.errors import ConfigError

    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(b"\n".join(lines))
    try:
        load_data(DataConfig(source=str(path), eval_size=0))
    except ConfigError as exc:
        assert path.name in str(exc) or "fuzz" in str(exc), str(exc)  # the message names the file


@pytest.mark.timeout(120)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_LINES)
def test_fuzz_samples_files(tmp_path, monkeypatch, lines):
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"\n".join(lines))
    result, _ = invoke(["rewards", "test", path, "--reward", "numeric_match"], monkeypatch, tmp_path)
    _assert_clean_exit(result, ok_codes=(0, 1, 2))  # 1: the scores look wrong, which is the command's finding
