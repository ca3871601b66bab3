"""The tools: / environment: config sections: validation before a model loads, and the mapping to TRL."""
from __future__ import annotations

import inspect

import pytest

from grpokit.config.run_config import from_dict
from grpokit.errors import ConfigError
from grpokit.tools import ToolSpec, trainer_kwargs
from grpokit.tools.config import EnvironmentConfig


def config(**extra) -> dict:
    raw = {"name": "t", "data": {"source": "synthetic:arithmetic", "max_samples": 8},
           "rewards": [{"name": "numeric_match"}], "tools": [{"name": "python"}]}
    raw.update(extra)
    return raw


@pytest.mark.parametrize("extra,message", [
    ({"tools": [{"name": "pyhton"}]}, "did you mean 'python'"),  # a typo names the nearest tool
    ({"tools": [{"name": "python"}, {"name": "python"}]}, "listed twice"),  # two tools one name: TRL keeps one
    ({"tools": [{"name": "python", "params": {"timout": 5}}]}, "has no param(s) ['timout']"),  # bad param key
    ({"tools": [{"name": "python", "params": {"timeout": -1}}]}, "wall_s must be > 0"),  # bad param value
    ({"tools": [{"name": "calculator", "params": {"digits": 3}}]}, "takes no params"),  # a function tool
    ({"tools": [{"name": "search"}]}, "search needs params: {path"),  # search without documents
    ({"environment": {"max_turns": 0}}, "max_turns must be at least 1"),  # 0 rounds is no tool use
    ({"environment": {"chat_template": "qwen"}}, "choose one of auto, model, chatml"),
    ({"tools": [], "environment": {"max_turns": 3}}, "tools: is empty"),  # settings for tools that are not there
    ({"training": {"max_tool_calling_iterations": 9}}, "disagree"),  # two knobs for one limit
    ({"data": {"source": "synthetic:arithmetic", "conversational": False}}, "data.conversational: true"),
])
def test_bad_tool_config_is_a_config_error_that_says_what_to_change(extra, message):
    with pytest.raises(ConfigError, match=None) as info:
        from_dict(config(**extra), check_data=False)
    assert message in str(info.value)


def test_config_maps_to_trl_arguments(tmp_path):
    cfg = from_dict(config(tools=[{"name": "python", "params": {"timeout": 2}}, {"name": "calculator"}],
                           environment={"max_turns": 3}, profile="cpu", output_dir=str(tmp_path)), check_data=False)
    kwargs = trainer_kwargs(cfg.tools, cfg.environment)
    from trl import GRPOTrainer

    from grpokit.config.profiles import build_grpo_config

    # Every key is a real GRPOTrainer argument: environment_factory, TRL's per-rollout environments.
    assert set(kwargs) == {"environment_factory"}
    assert set(kwargs) <= set(inspect.signature(GRPOTrainer.__init__).parameters)
    env = kwargs["environment_factory"]()
    # TRL exposes an environment's public methods (bar reset/get_reward) as the tools.
    public = [n for n, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
              if not n.startswith("_") and n not in ("reset", "get_reward")]
    assert sorted(public) == ["calculator", "python"]
    assert env._tools["python"].limits.wall_s == 2.0
    args = build_grpo_config(cfg, None)  # complete as built: nothing is set on it afterwards
    assert args.max_tool_calling_iterations == 3  # TRL's own default is no limit
    # The tool diagnostics train at weight 0, after the config's rewards, in the order TRL gets them.
    assert args.reward_weights == [1.0] * len(cfg.rewards) + [0.0, 0.0]


def test_no_tools_changes_nothing():
    cfg = from_dict(config(tools=[]), check_data=False)
    assert trainer_kwargs(cfg.tools, cfg.environment) == {} and cfg.environment == EnvironmentConfig()


def test_tool_schemas_render_from_docstrings():
    from transformers.utils import get_json_schema

    env = trainer_kwargs([ToolSpec("python"), ToolSpec("calculator")], EnvironmentConfig())["environment_factory"]()
    schema = get_json_schema(env.python)["function"]
    assert schema["name"] == "python" and schema["parameters"]["required"] == ["code"]
    assert "Python code" in schema["parameters"]["properties"]["code"]["description"]
    assert get_json_schema(env.calculator)["function"]["parameters"]["required"] == ["expression"]


def test_tool_health_rules_and_report_panel():
    from grpokit.health.rules import HealthConfig, replay
    from grpokit.reporting.report import panels
    from tests.helpers.synthetic_runs import history

    for scenario in ("tool_calls_fail", "tool_never_called", "tool_turn_limit"):
        records = history(scenario, steps=30)
        # Each tool failure raises its own alert, once, and nothing else.
        assert [a.rule for a in replay(records, HealthConfig(max_completion_length=128))] == [scenario]
        tool_panel = [p for p in panels(records, HealthConfig()) if p.title.startswith("tool use")]
        assert tool_panel and "tools/call_frequency" in tool_panel[0].keys and scenario in tool_panel[0].rules
    # A run without tools gets no tool panel and no tool alert.
    assert not [p for p in panels(history("healthy"), HealthConfig()) if p.title.startswith("tool use")]
    assert replay(history("healthy"), HealthConfig(max_completion_length=128)) == []
