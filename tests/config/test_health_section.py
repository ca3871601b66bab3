"""The `health:` section lives with the config; its list of rule ids must match the health rules."""
import pytest

from grpokit.config.health_section import RULE_IDS, HealthConfig
from grpokit.errors import ConfigError
from grpokit.health import rules, symptoms, table


def test_rule_ids_are_the_health_rules():
    # Config comes before health, so it keeps its own copy of the ids health.disable accepts.
    # One list: the parameter classes' ids are the table's, live rules first, then the after-run ones.
    assert RULE_IDS == tuple(rule.id for rule in table.TABLE)
    assert symptoms.RULES == tuple(table.STEP_RULES) == RULE_IDS[:len(symptoms.RULES)]
    assert {"reward_constant", "loss_zero", "run_killed", "no_metrics"} <= set(RULE_IDS) - set(symptoms.RULES)


def test_the_rules_use_the_config_section():
    assert rules.HealthConfig is HealthConfig


def test_a_bad_rule_id_names_the_rules():
    with pytest.raises(ConfigError, match="unknown rule.*'colapse'.*collapse"):
        HealthConfig.from_dict({"disable": ["colapse"]})


def test_a_rule_block_sets_that_rule_only():
    hc = HealthConfig.from_dict({"rules": {"truncation": {"clipped_ratio": "0.9", "patience": 3}}})
    assert hc.params("truncation").clipped_ratio == 0.9 and hc.params("truncation").patience == 3
    assert hc.params("diverged").clipped_ratio == 0.95  # diverged keeps its own copy


def test_a_flat_key_still_works_and_names_its_nested_key():
    with pytest.warns(FutureWarning, match=r"clipped_ratio \(now health.rules.truncation.clipped_ratio and "
                                           r"health.rules.diverged.clipped_ratio\)"):
        hc = HealthConfig.from_dict({"clipped_ratio": 0.9, "no_signal_steps": 8})
    # A flat key two rules read sets both, as it did when they shared it.
    assert hc.params("truncation").clipped_ratio == hc.params("diverged").clipped_ratio == 0.9
    assert hc.params("no_learning_signal").patience == 8


def test_the_nested_key_wins_over_a_flat_one():
    with pytest.warns(FutureWarning):
        hc = HealthConfig.from_dict({"kl_max": 0.3, "rules": {"kl_blowup": {"kl_max": 0.7}}})
    assert hc.params("kl_blowup").kl_max == 0.7


@pytest.mark.parametrize("data,needle", [
    ({"rules": {"trunction": {}}}, "unknown rule 'trunction'.*did you mean 'truncation'"),
    ({"rules": {"truncation": {"clipped": 0.9}}}, "health.rules.truncation: unknown key 'clipped'.*clipped_ratio"),
    ({"rules": {"truncation": {"patience": 0}}}, "health.rules.truncation.patience must be at least 1"),
    ({"rules": {"collapse": {"enabled": "no"}}}, "health.rules.collapse.enabled must be true or false"),
    ({"rules": {"judge_slow": {"max_latency_s": 0}}}, "positive number of seconds"),
    ({"rules": {"reward_stuck": {"window": 5}}}, "must be fewer than it"),
    ({"rules": ["truncation"]}, "health.rules must be a mapping"),
])
def test_rule_block_errors(data, needle):
    with pytest.raises(ConfigError, match=needle):
        HealthConfig.from_dict(data)


@pytest.mark.parametrize("rule", RULE_IDS)
def test_every_rule_can_be_switched_off(rule):
    from grpokit.health.monitor import HealthMonitor

    if rule not in table.STEP_RULES:  # read after the run: tests/health/test_after_run_rules.py switches them off
        assert HealthConfig.from_dict({"rules": {rule: {"enabled": False}}}).params(rule).enabled is False
        return
    assert rule in HealthMonitor(HealthConfig())._rules
    assert rule not in HealthMonitor(HealthConfig.from_dict({"rules": {rule: {"enabled": False}}}))._rules
    assert rule not in HealthMonitor(HealthConfig.from_dict({"disable": [rule]}))._rules


def test_to_dict_round_trips():
    hc = HealthConfig.from_dict({"stop_on_critical": True, "rules": {"kl_blowup": {"kl_max": 0.7}}})
    assert HealthConfig.from_dict(hc.to_dict()) == hc


def test_the_constructor_takes_a_flat_key_like_yaml_does():
    with pytest.warns(FutureWarning, match=r"kl_max \(now health.rules.kl_blowup.kl_max\)"):
        hc = HealthConfig(kl_max=2.5, expected_logged_steps=40)
    assert hc.params("kl_blowup").kl_max == 2.5
    assert hc.expected_logged_steps == 40
    assert hc.params("collapse") == HealthConfig().params("collapse")
    with pytest.warns(FutureWarning):
        both = HealthConfig(clipped_ratio=0.8)
    assert both.params("truncation").clipped_ratio == 0.8 and both.params("diverged").clipped_ratio == 0.8


def test_the_constructor_names_the_key_to_write_for_an_unknown_one():
    with pytest.raises(ConfigError, match=r"unknown argument 'kl_mx'; did you mean 'kl_max'"):
        HealthConfig(kl_mx=2.0)
