"""The `health:` section lives with the config; its list of rule ids must match the health rules."""
import pytest

from grpokit.config.health_section import RULE_IDS, HealthConfig
from grpokit.errors import ConfigError
from grpokit.health import rules, symptoms, table


def test_rule_ids_are_the_health_rules():
    # Config comes before health, so it keeps its own copy of the ids health.disable accepts.
    assert RULE_IDS == symptoms.RULES, "copy symptoms.RULES into grpokit/config/health_section.py RULE_IDS"
    assert RULE_IDS == tuple(rule.id for rule in table.TABLE)


def test_the_rules_use_the_config_section():
    assert rules.HealthConfig is HealthConfig


def test_a_bad_rule_id_names_the_rules():
    with pytest.raises(ConfigError, match="unknown rule.*'colapse'.*collapse"):
        HealthConfig.from_dict({"disable": ["colapse"]})
