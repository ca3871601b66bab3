"""restated_expression: pays for writing the sum before the answer, first on the line, and nothing else."""
import pytest

from grpokit.rewards import RewardConfigError, get


@pytest.mark.parametrize("completion, expected", [
    (" 47 + 38 = 85", 1.0),
    ("47+38=85\nmore text", 1.0),      # spacing ignored
    (" 38 + 47 = 85", 1.0),            # the sum's two sides swapped
    (" 47 + 38 = 12", 1.0),            # a wrong result still restates: correctness is another reward's job
    (" 85 = 47 + 38", 0.0),            # the expression must lead the line
    (" 85\n47 + 38 =", 0.0),           # ... the first line
    (" 47 + 38 is 85", 0.0),           # not followed by `=`
    (" 47 + 39 = 86", 0.0),            # another sum
    (" 147 + 38 = 185", 0.0),          # a longer number is not the operand
    ("", 0.0),
])
def test_scores(completion, expected):
    assert get("restated_expression")([completion], expression=["47 + 38"]) == [expected]


def test_order_and_then_settings():
    strict = get("restated_expression", either_order=False)
    assert strict([" 38 + 47 = 85", " 47 + 38 = 85"], expression=["47 + 38"] * 2) == [0.0, 1.0]
    bare = get("restated_expression", then="")
    assert bare([" 47 + 38 is 85"], expression=["47 + 38"]) == [1.0]
    # Subtraction is not commutative: no swapped form.
    assert get("restated_expression")([" 38 - 47 = -9"], expression=["47 - 38"]) == [0.0]


def test_missing_cells_and_column():
    reward = get("restated_expression")
    assert reward([" 1 + 2 = 3", " 1 + 2 = 3"], expression=["1 + 2", None]) == [1.0, None]
    with pytest.raises(RewardConfigError, match="'expression' column"):
        reward([" 1 + 2 = 3"], answer=["3"])
    with pytest.raises(RewardConfigError, match="then must be text"):
        get("restated_expression", then=3)
