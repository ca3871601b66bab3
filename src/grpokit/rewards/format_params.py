"""A run's answer format in its rewards' parameters: which rewards take it, and a check that
the format rewards' own tags agree with it (the format itself is grpokit.answer_format)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from grpokit.answer_format import DEFAULT, AnswerFormat
from grpokit.rewards.registry import RewardConfigError, takes


def reads_answer_format(name: str) -> bool:
    """Whether the registered reward `name` takes `answer_format` (it reads the answer or checks the tags)."""
    return takes(name, "answer_format")


def with_answer_format(name: str, params: Mapping[str, Any] | None, answer_format: Any) -> dict:
    """`params` for reward `name`, with the run's answer format added where the reward takes one.

    A reward that sets its own `answer_format` (or, for format rewards, its own
    `tags`) keeps it; with the default format nothing is added, so the reward
    is built exactly as before.
    """
    params = dict(params or {})
    fmt = AnswerFormat.of(answer_format)
    if fmt != DEFAULT and reads_answer_format(name) and "answer_format" not in params and "tags" not in params:
        params["answer_format"] = fmt
    return params


def check_agrees(specs: Sequence[tuple[str, Mapping[str, Any]]], answer_format: Any, where: str = "rewards") -> None:
    """A format reward whose own `tags` end in another answer tag than the run's is an error.

    Otherwise the format reward would teach `<final>` while the correctness
    rewards read `<answer>`. `specs` is [(name, params), ...] in config order.
    """
    fmt = AnswerFormat.of(answer_format)
    readers = [name for name, params in specs if reads_answer_format(name) and "tags" not in (params or {})]
    for i, (name, params) in enumerate(specs):
        tags = (params or {}).get("tags")
        if tags is None or not readers:
            continue
        listed = [tags] if isinstance(tags, str) else list(tags) if isinstance(tags, (list, tuple)) else None
        if not listed or listed[-1] == fmt.answer_tag:
            continue
        others = ", ".join(n for n in readers if n != name) or name
        suggestion = ("{answer_tag: %s}" % listed[-1]) if len(listed) == 1 else \
            "{reasoning_tag: %s, answer_tag: %s}" % (listed[-2], listed[-1])
        raise RewardConfigError(
            f"{where}[{i}] {name}: tags {listed} end with <{listed[-1]}>, but the run reads answers from "
            f"<{fmt.answer_tag}> ({others}). Set data.answer_format: {suggestion} once instead; the format and "
            f"correctness rewards, evaluation and the default system prompt all follow it. Then drop this reward's tags."
        )
