"""`imports:` makes a user's own reward module usable from a config."""
import textwrap

import pytest

from grpokit.config.run_config import load_config
from grpokit.errors import ConfigError

CONFIG = """
name: plugin-run
imports: [{imports}]
rewards: [{{name: {reward}}}]
training: {{num_generations: 2, per_device_train_batch_size: 2, max_steps: 1}}
"""


def write(tmp_path, imports, reward):
    path = tmp_path / "run.yaml"
    path.write_text(CONFIG.format(imports=imports, reward=reward))
    return path


def test_a_py_file_beside_the_config_registers_its_reward(tmp_path, monkeypatch):
    # The user keeps rewards next to the config and runs from elsewhere.
    (tmp_path / "my_rewards.py").write_text(textwrap.dedent("""
        from grpokit.rewards import register

        @register("plugin_shouts")
        def plugin_shouts(completions, **kwargs):
            return [1.0 for _ in completions]
    """))
    monkeypatch.chdir(tmp_path.parent)
    cfg = load_config(write(tmp_path, "my_rewards.py", "plugin_shouts"))
    assert cfg.rewards[0].name == "plugin_shouts"
    # Loading the same config again must not re-register (which would raise).
    load_config(write(tmp_path, "my_rewards.py", "plugin_shouts"))


@pytest.mark.parametrize("imports,needle", [
    ("missing_file.py", "does not exist"),  # a typo in the path
    ("no_such_module_xyz", "cannot import module"),  # not installed
])
def test_bad_imports_fail_with_what_to_change(tmp_path, imports, needle):
    with pytest.raises(ConfigError, match=needle):
        load_config(write(tmp_path, imports, "numeric_match"))


def test_a_reward_the_imports_do_not_define_is_still_unknown(tmp_path):
    (tmp_path / "empty.py").write_text("x = 1\n")
    with pytest.raises(ConfigError, match="unknown reward"):
        load_config(write(tmp_path, "empty.py", "not_registered_anywhere"))
