"""The answer format: the one owner of `<reasoning>...</reasoning><answer>...</answer>`.

A completion commits to an answer in a way the system prompt asks for; the
format rewards check that shape, the correctness rewards read the answer out
of it, and evaluation counts how often it is there. All of them ask one
`AnswerFormat` object, so a run with custom tags (`<think>` / `<final>`) reads
the same answer in training and in evaluation:

    fmt = AnswerFormat(reasoning_tag="think", answer_tag="final")
    fmt.system_prompt()        # tells the model the format
    fmt.committed(text)        # the answer a completion commits to
    fmt.has_format(text)       # reasoning block, then answer block
    get("numeric_match", answer_format=fmt)   # reads <final>

In a run config it is set once, as `data.answer_format`, and reaches every
reward that reads the answer, evaluation and the default system prompt.
Nothing here raises on model output, and every scan is linear in the text
(`str.find` / `str.rfind`, never a lazy regex over tags).

A leaf: the data config (the default system prompt), the rewards and evaluation
all read it, and it imports none of them. How a run's answer format reaches
each reward's parameters is grpokit.rewards.format_params.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence

from grpokit.completions import extract_boxed, extract_tag
from grpokit.errors import RewardConfigError

# No answer is 100k characters long: only the end of a longer completion is read.
_MAX_TEXT = 100_000

_PROMPT_HEAD = "Think about the problem step by step, then give your final answer. Respond in exactly this format:\n"


def check_tag(tag: Any, where: str) -> str:
    """A bare tag name (`answer`, not `<answer>`), or RewardConfigError naming `where`."""
    if not isinstance(tag, str) or not tag or any(c in tag for c in "<>/ \t\n"):
        raise RewardConfigError(
            f"{where}: {tag!r} is not a tag name; give bare names without brackets, e.g. 'answer' not '<answer>'"
        )
    return tag


def tags_in_order(text: str, tags: Sequence[str]) -> bool:
    """Each `<tag>` opened and then closed, tag after tag, anywhere in the text (linear)."""
    pos = 0
    for tag in tags:
        start = text.find(f"<{tag}>", pos)
        if start < 0:
            return False
        end = text.find(f"</{tag}>", start + len(tag) + 2)
        if end < 0:
            return False
        pos = end + len(tag) + 3
    return True


@dataclass(frozen=True)
class AnswerFormat:
    """How a completion marks its reasoning and its answer.

    reasoning_tag: the tag around the working (`reasoning`); None when the
        format is the answer block alone.
    answer_tag: the tag around the committed answer (`answer`).
    """

    reasoning_tag: str | None = "reasoning"
    answer_tag: str = "answer"

    def __post_init__(self) -> None:
        check_tag(self.answer_tag, "answer_tag")
        if self.reasoning_tag is not None:
            check_tag(self.reasoning_tag, "reasoning_tag")
            if self.reasoning_tag == self.answer_tag:
                raise RewardConfigError(
                    f"reasoning_tag and answer_tag are both {self.answer_tag!r}; "
                    "give them different names, e.g. {reasoning_tag: think, answer_tag: answer}"
                )

    @classmethod
    def of(cls, value: Any) -> "AnswerFormat":
        """An AnswerFormat from None (the default), an AnswerFormat, or a mapping like {answer_tag: final}."""
        if value is None:
            return DEFAULT
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise RewardConfigError(f"must be a mapping like {{reasoning_tag: think, answer_tag: final}}, got {value!r}")
        valid = [f.name for f in fields(cls)]
        for key in value:
            if key not in valid:
                close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise RewardConfigError(f"unknown key {key!r}: {hint}valid keys: {', '.join(valid)}")
        return cls(**dict(value))

    # ------------------------------------------------------------ the shape

    @property
    def tags(self) -> tuple[str, ...]:
        """The tags in the order a completion writes them; the answer tag is last."""
        return (self.answer_tag,) if self.reasoning_tag is None else (self.reasoning_tag, self.answer_tag)

    def snippet(self) -> str:
        """The format as the system prompt shows it: each block with `...` inside."""
        return "\n".join(f"<{tag}>\n...\n</{tag}>" for tag in self.tags)

    def system_prompt(self) -> str:
        """The default system prompt: think, then answer, in exactly this format."""
        return _PROMPT_HEAD + self.snippet()

    def wrap(self, answer: str, reasoning: str = "") -> str:
        """A completion in this format (for examples, probes and tests)."""
        blocks = [] if self.reasoning_tag is None else [f"<{self.reasoning_tag}>\n{reasoning}\n</{self.reasoning_tag}>"]
        return "\n".join([*blocks, f"<{self.answer_tag}>\n{answer}\n</{self.answer_tag}>"])

    def has_format(self, text: str) -> bool:
        """The reasoning block, then the answer block, each opened and closed, anywhere in the text.

        What evaluation's format rate counts and `soft_xml_format` rewards.
        """
        return tags_in_order(text, self.tags)

    # ------------------------------------------------------------ the answer

    def tagged(self, text: str) -> str | None:
        """The last answer tag's content, stripped; None when there is no closed pair."""
        return extract_tag(text, self.answer_tag)

    def marked(self, text: str) -> str | None:
        """The answer tag's content (a `\\boxed{}` in it unwrapped), else the last `\\boxed{}`; None if neither."""
        text = text[-_MAX_TEXT:]
        tagged = self.tagged(text)
        if tagged is not None:
            text = tagged
        if "\\boxed" in text or "\\fbox" in text:
            boxed = extract_boxed(text)
            if boxed is not None:
                return _unlatex(boxed)
        return tagged

    def committed(self, text: str) -> str:
        """The answer a completion commits to: the answer tag, else the last `\\boxed{}`, else the whole text.

        The whole text is capped to its last 100,000 characters, which keeps
        normalising a 1 MB completion cheap.
        """
        marked = self.marked(text)
        return text[-_MAX_TEXT:] if marked is None else marked


DEFAULT = AnswerFormat()


def _unlatex(answer: str) -> str:
    # \boxed{\text{Paris}} -> Paris: text markup is not part of the answer.
    return re.sub(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", answer)
