"""Presets: declarative reward mixes that resolve through the registry."""
from __future__ import annotations

import importlib
import math
import subprocess
import sys

import pytest

import grpokit.rewards as rewards
from grpokit.rewards import RewardConfigError, canonical, get
from grpokit.rewards.presets import get_preset, preset, preset_spec, presets

PRESETS = ["math_reasoning", "code_generation", "summarization", "qa", "json_output", "summarization_judge", "qa_judge",
           "kb_qa"]
CONSTANTS = ["MATH_REASONING", "CODE_GENERATION", "SUMMARIZATION", "QA", "JSON_OUTPUT", "SUMMARIZATION_JUDGE",
             "QA_JUDGE", "KB_QA"]


def _registered(name: str) -> bool:
    try:
        canonical(name)
        return True
    except RewardConfigError:
        return False


def _resolvable(key: str) -> bool:
    return all(_registered(e["name"]) for e in preset_spec(key))


def test_the_presets_exist():
    # DESIGN.md promises the first five by name; summarization and QA also come with a judge variant.
    assert presets() == sorted(PRESETS)


@pytest.mark.parametrize("key", PRESETS)
def test_spec_shape(key):
    # Configs and `grpokit init` copy the spec: every entry has a name, a
    # positive weight and a params dict; correctness-style terms lead the mix.
    spec = preset_spec(key)
    assert spec and all(set(e) == {"name", "weight", "params"} for e in spec)
    assert all(isinstance(e["weight"], float) and e["weight"] > 0 for e in spec)
    assert all(isinstance(e["params"], dict) for e in spec)
    assert len({e["name"] for e in spec}) == len(spec), "TRL logs rewards by name: no duplicates"
    assert spec[0]["weight"] == max(e["weight"] for e in spec) or key == "json_output"
    info = get_preset(key)
    assert info.description and info.columns


def test_spec_is_a_copy():
    # A caller editing its config must not change the preset for everyone else.
    spec = preset_spec("qa")
    spec[0]["weight"] = 99.0
    spec[0]["params"]["x"] = 1
    assert preset_spec("qa")[0]["weight"] != 99.0 and preset_spec("qa")[0]["params"] == {}


NAMES = [
    # (what the user types, the preset, why)
    ("math_reasoning", "math_reasoning", "canonical name"),
    ("math", "math_reasoning", "short alias"),
    ("MATH-REASONING", "math_reasoning", "case and dashes do not matter"),
    ("summary", "summarization", "alias"),
    (" json ", "json_output", "stray spaces from a YAML value"),
]


@pytest.mark.parametrize("typed,expected,why", NAMES)
def test_preset_lookup(typed, expected, why):
    assert get_preset(typed).name == expected, why


def test_unknown_preset_names_nearest():
    # A typo gets the nearest valid name and the full list.
    with pytest.raises(RewardConfigError, match="math_reasoning") as info:
        preset("math_reasonin")
    assert "Presets:" in str(info.value)


def test_importing_rewards_never_needs_every_reward():
    # The constants are lazy: importing the package works even where a reward
    # named by a preset is not registered (e.g. before the family is merged).
    code = "import grpokit.rewards as r; import grpokit.rewards.presets as p; print(len(r.presets()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(len(PRESETS))


@pytest.mark.parametrize("key,const", list(zip(PRESETS, CONSTANTS)))
def test_weight_constants_match_spec(key, const):
    # Weights need no registry lookup, so they are always available.
    presets_module = importlib.import_module("grpokit.rewards.presets")
    weights = getattr(presets_module, f"{const}_WEIGHTS")
    assert weights == [e["weight"] for e in preset_spec(key)]
    assert getattr(rewards, f"{const}_WEIGHTS") == weights


def test_unknown_constant_is_attribute_error():
    # hasattr/getattr with defaults must keep working on the package.
    assert not hasattr(rewards, "NOPE_REWARDS")
    assert getattr(rewards, "NOT_A_THING", 7) == 7


PRESET_ENTRIES = [(key, entry["name"], entry["params"]) for key in PRESETS for entry in preset_spec(key)]


@pytest.mark.parametrize("key,name,params", PRESET_ENTRIES, ids=[f"{k}:{n}" for k, n, _ in PRESET_ENTRIES])
def test_every_preset_reward_resolves(key, name, params):
    # Each name must be registered and build with the preset's params. Rewards
    # from other families land in other branches: skip (not pass) until merged.
    if not _registered(name):
        pytest.skip(f"reward {name!r} (preset {key}) is not registered in this branch yet; it runs after the merge")
    func = get(name, **params)
    assert callable(func) and func.__name__


@pytest.mark.parametrize("key,const", list(zip(PRESETS, CONSTANTS)))
def test_preset_builds_funcs_with_weights(key, const):
    # preset() and the constants give the same callables, aligned with weights,
    # and each scores a sample row without raising.
    if not _resolvable(key):
        missing = [e["name"] for e in preset_spec(key) if not _registered(e["name"])]
        with pytest.raises(RewardConfigError, match=f"preset {key!r} uses reward"):
            preset(key)
        pytest.skip(f"preset {key} needs {missing}, not registered in this branch yet")
    funcs, weights = preset(key)
    assert len(funcs) == len(weights) == len(preset_spec(key))
    assert [f.__name__ for f in getattr(rewards, f"{const}_REWARDS")] == [f.__name__ for f in funcs]
    row = {"answer": ["4"], "tests": [["assert True"]], "schema": [{"type": "object"}],
           "reference": ["two plus two is four"], "prompts": ["What is 2+2?"]}
    for func in funcs:
        out = func(["<think>2+2=4</think><answer>4</answer>"], **row)
        assert len(out) == 1 and (out[0] is None or math.isfinite(out[0]))


def test_preset_builds_in_order_with_stand_ins(monkeypatch):
    # Until the other families merge, stand-in rewards (in a private copy of
    # the registry) prove preset() and the constants build every entry in
    # spec order, with weights aligned, through the registry.
    from grpokit.rewards import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    for key in PRESETS:
        for entry in preset_spec(key):
            if not _registered(entry["name"]):
                def stand_in(completions, _name=entry["name"], **kwargs):
                    return [0.0] * len(completions)

                registry.register(entry["name"], family="test")(stand_in)
    for key, const in zip(PRESETS, CONSTANTS):
        funcs, weights = preset(key)
        spec = preset_spec(key)
        assert weights == [e["weight"] for e in spec]
        assert len(getattr(rewards, f"{const}_REWARDS")) == len(spec)
        for func, entry in zip(funcs, spec):
            assert func is registry._REGISTRY[entry["name"]].factory or func.__name__ == entry["name"]


def test_style_only_entries_build_now():
    # The rewards this branch owns resolve today, whatever else is missing.
    style = {"reasoning_quality", "repetition_penalty", "language_consistency", "reference_overlap"}
    used = {e["name"] for key in PRESETS for e in preset_spec(key)} & style
    assert used == style
    for name in used:
        assert get(name).__name__ == name
