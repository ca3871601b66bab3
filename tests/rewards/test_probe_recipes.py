"""`grpokit rewards probe` on every shipped recipe: each passes on its own data, in its own answer
form and token budget, and the same recipe with a planted leaky reward added fails."""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from grpokit.completions import texts

ROOT = Path(__file__).resolve().parents[2]
RECIPES = sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
GSM8K = "hf:openai/gsm8k:main"


def _load(name: str, overrides: list[str] | None = None):
    from grpokit.config.run_config import load_config

    return load_config(str(ROOT / "configs" / name), overrides or [])


def _needs_judge(cfg) -> bool:
    specs = list(cfg.rewards) + [s for stage in cfg.stages or [] for s in stage.rewards or []]
    return any(s.name in ("llm_judge", "judge") for s in specs)


def _humaneval_as_mbpp(shared: Path, path: Path, count: int) -> None:
    # MBPP is on the hub; HumanEval is here. Written in MBPP's layout (text, test_list, code),
    # the code recipe reads it exactly as it reads MBPP.
    with gzip.open(shared / "humaneval.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for _, line in zip(range(count), f)]
    with path.open("w") as out:
        for r in rows:
            out.write(json.dumps({"text": r["prompt"], "test_list": [r["test"] + f"\ncheck({r['entry_point']})\n"],
                                  "code": r["prompt"] + r["canonical_solution"]}) + "\n")


# XSum is on the hub and no summarization set is in shared/data: two news-style rows in its layout,
# with one-sentence summaries of XSum's usual length (20-25 words).
XSUM_ROWS = [
    {"document": "The city council voted on Tuesday to build a new library downtown. It will open in 2026 and "
                 "cost 12 million dollars. Residents had asked for more study space for years, and speakers "
                 "described crowded reading rooms at the old branch, which may become a community centre.",
     "summary": "A new downtown library costing 12 million dollars will open in 2026, after residents spent years "
                "asking the council for more study space."},
    {"document": "Volunteers planted five hundred trees along the motorway on Saturday. The project aims to "
                 "reduce noise for nearby homes, and organisers said a second planting day will follow in the "
                 "autumn if the council agrees to pay for more saplings.",
     "summary": "Volunteers have planted five hundred trees beside the motorway to cut traffic noise for nearby "
                "homes, with a second planting day planned for the autumn."},
]


def recipe_rows(name: str, shared: Path, tmp_path: Path, count: int = 8):
    """(config, rows) for a recipe; a hub data set is replaced by the same data (or layout) from shared/data."""
    from grpokit.probe.config import data_rows

    cfg = _load(name)
    source = cfg.data.source
    if source == GSM8K:
        cfg = _load(name, [f"data.source={shared / 'gsm8k_train.jsonl'}"])
    elif source.startswith("hf:google-research-datasets/mbpp"):
        path = tmp_path / "mbpp.jsonl"
        _humaneval_as_mbpp(shared, path, count)
        cfg = _load(name, [f"data.source={path}", "data.eval_size=0"])
    elif source.startswith("hf:EdinburghNLP/xsum"):
        path = tmp_path / "xsum.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in XSUM_ROWS))
        cfg = _load(name, [f"data.source={path}", "data.eval_size=0", "data.max_samples=null"])
    elif source.startswith("hf:"):
        pytest.fail(f"{name}: no local copy of {source} is set up for this test; add one above")
    return cfg, data_rows(cfg, count)


def _no_judge(settings, bodies):
    from grpokit.rewards.judge.client import Reply

    return [Reply(error="no judge server in this test") for _ in bodies]


@pytest.mark.parametrize("name", RECIPES)
def test_every_shipped_recipe_passes_the_probe(name, shared_data, tmp_path, monkeypatch):
    from grpokit.rewards.judge import client
    from grpokit.probe.config import probe_config

    if _needs_judge(_load(name)):
        # The judge needs a server (tests/rewards/test_judge_injection_server.py probes one): here it
        # answers nothing, scores None, and the recipe's other rewards and their total are probed.
        monkeypatch.setattr(client, "ask_all", _no_judge)

    cfg, rows = recipe_rows(name, shared_data, tmp_path, 4 if "code" in name else 8)
    pending = gamed_until_fixed(cfg)
    for label, report in probe_config(cfg, rows):
        assert not report.errors, (label, report.errors)
        if pending:
            found = {e.probe for e in report.exploits if e.severity == "fail"}
            assert set(pending) & found, f"{name}: the probe must find one of {sorted(pending)}, found {sorted(found)}"
            pytest.xfail(f"{name} is gamed ({'; '.join(sorted(set(pending.values())))}) until its rewards are fixed")
        assert report.ok, f"{name} {label}:\n" + "\n".join(str(e) for e in report.worst())
        assert any(report.checked.values()), "the probes ran"


def gamed_until_fixed(cfg) -> dict[str, str]:
    """probe -> why, for the recipes issue 34 found gamed, while their rewards still are: the probe must
    fail them. Once the rewards are fixed (json values compared with the gold, fuzzy_match reading
    numbers as numbers, citation paying only documents that hold the answer) this is empty."""
    from grpokit.rewards import RewardConfigError, get

    # Each reward as the recipe builds it (its own params), on the cases.
    built = {spec.name: get(spec.name, **(spec.params or {})) for spec in cfg.rewards}
    docs = {"answer": ["14 euros"], "answer_sources": ["2"],
            "sources": [["The car park costs 3 euros.", "An adult ticket costs 14 euros."]]}

    def pays(name, completion):
        try:
            return built[name]([completion], **docs)[0] or 0.0
        except RewardConfigError:  # it reads a column these cases lack: the probe on the recipe's rows judges it
            return 0.0

    out = {}
    if {"json_format", "json_schema"} & set(built) and not {"json_object_match", "json_field_match"} & set(built):
        out["json_placeholder"] = "an object of empty values is paid like the right one"
    if "fuzzy_match" in built and pays("fuzzy_match", "<answer>140 euros</answer>") >= 0.8:
        # A wrong number in a text gold, or a piece of a number gold (18 for 180: 0.8), whichever the rows hold.
        out["near_number"] = out["gold_fragment"] = "fuzzy_match pays 140 euros for 14 euros, 18 for 180"
    if "citation" in built and pays("citation", "<answer>14 euros</answer> [1]") > 0:
        out["cites_wrong_source"] = "citation pays a document that does not hold the answer"
    return out


def _gold(value) -> str:
    return str(value).rsplit("####", 1)[-1].strip()


def gold_anywhere(completions, answer, **kwargs):
    """The planted leak: full marks when the gold appears anywhere in the text."""
    out = []
    for text, gold in zip(texts(completions), answer):
        g = _gold(gold)
        out.append(1.0 if re.search(r"(?<![\w.])" + re.escape(g) + r"(?![\w.])", text) else 0.0)
    return out


@pytest.mark.parametrize("name", RECIPES)
def test_a_leaky_reward_added_to_a_recipe_fails_the_probe(name, shared_data, tmp_path, monkeypatch):
    cfg = _load(name)
    if _needs_judge(cfg):
        pytest.skip(f"{name} grades with llm_judge, which needs a judge server")
    cfg, rows = recipe_rows(name, shared_data, tmp_path, 4 if "code" in name else 8)
    if not any("answer" in r for r in rows):
        pytest.skip(f"{name}'s rows have no gold answer for a reward to leak (its rewards read tests or a reference)")
    from grpokit.probe import config as probe_config_module

    build = probe_config_module.build

    def with_leak(specs, answer_format=None):
        funcs, weights = build(specs, answer_format)
        return funcs + [gold_anywhere], weights + [max(weights)]

    monkeypatch.setattr(probe_config_module, "build", with_leak)
    results = probe_config_module.probe_config(cfg, rows)
    for label, report in results:
        caught = {e.probe for e in report.exploits if e.reward == "gold_anywhere" and e.severity == "fail"}
        assert caught and not report.ok, f"{name} {label}: the leak went unseen; skipped {report.skipped}"


def test_the_demo_probe_writes_bare_answers_within_six_tokens(shared_data, tmp_path):
    # The CPU demo answers "Answer: 71 + 32 =" with the number alone, in at most 6 tokens: its honest
    # reference is the bare number (which its format reward pays), and what cannot fit is named.
    from grpokit.probe.config import probe_config

    cfg, rows = recipe_rows("cpu-demo.yaml", shared_data, tmp_path)
    (_, report), = probe_config(cfg, rows)
    assert report.forms == ["bare answer"]
    assert report.budget.startswith("6 tokens (counted with")
    assert "regex_format" not in report.no_signal or report.ok
    for probe in ("boxed_everything", "ten_candidates", "tags_only"):
        assert probe in report.skipped and "the budget is 6 tokens" in report.skipped[probe]
    assert "gold_in_reasoning" in report.checked["numeric_match"]  # its short hedge fits a 2-digit sum
    assert report.ok, [str(e) for e in report.worst()]


def test_the_cli_exits_0_on_the_demo_and_lists_what_did_not_fit():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "grpokit", "rewards", "probe", str(ROOT / "configs" / "cpu-demo.yaml")],
                         check=False, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "skipped boxed_everything" in out.stdout and "no reward could be gamed" in out.stdout
