"""The run directory's one owner: its file names and its JSON-lines reading and appending."""
import json
import math

from grpokit.run_directory import layout
from grpokit.run_directory.jsonl import append_jsonl, read_jsonl, read_records


def test_every_name_is_listed_once():
    names = [v for k, v in vars(layout).items() if k.isupper() and isinstance(v, str)]
    assert sorted(names) == sorted(layout.ALL) and len(set(layout.ALL)) == len(layout.ALL)


def test_a_half_written_last_line_is_skipped_and_counted(tmp_path):
    # A run still writing (or killed mid-line): the demo and the report read what is whole.
    path = tmp_path / layout.METRICS
    path.write_text(json.dumps({"step": 1, "loss": 0.1}) + "\n" + '{"step": 2, "lo')
    assert read_jsonl(path) == ([{"step": 1, "loss": 0.1}], 1)
    assert read_records(tmp_path / "missing.jsonl") == []


def test_append_writes_one_line_with_nan_as_null(tmp_path):
    path = tmp_path / layout.ALERTS
    append_jsonl(path, {"step": 3, "value": math.nan, "obj": object})
    [line] = path.read_text().splitlines()
    assert json.loads(line)["value"] is None and json.loads(line)["step"] == 3


def test_the_demo_reads_a_run_that_is_still_writing(tmp_path):
    from grpokit.demo import read_alerts, read_metrics

    (tmp_path / layout.METRICS).write_text('{"step": 1}\n{"step": 2, "rew')
    assert read_metrics(tmp_path) == [{"step": 1}] and read_alerts(tmp_path) == []
