"""How a probe completion commits to an answer: the task's own form.

A run whose prompts end where the answer goes ("Answer: 47 + 38 =") is answered
with the bare number, and its rewards pay exactly that; a chat run with the
default system prompt answers in `<reasoning>`/`<answer>` tags. The probe
writes its honest and wrong references, and its exploits, in the form the
run's rewards pay an honest answer most for (`choose`), so an honest answer
is never judged in a format the run does not ask for.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from grpokit.answer_format import AnswerFormat

REASONING = "Let me work through this step by step.\nFirst, I read what the question asks.\nThen I work out the result."


@dataclass(frozen=True)
class Form:
    name: str
    compose: Callable[[str, str], str]  # (answer, reasoning) -> completion; reasoning may be ""
    reasoning: str = ""                 # what an honest completion of this form reasons with

    def write(self, answer: str, reasoning: str | None = None) -> str:
        """A completion committing to `answer`; `reasoning` (default: the form's own) comes before it."""
        return self.compose(answer, self.reasoning if reasoning is None else reasoning)


def tagged_form(fmt: AnswerFormat) -> Form:
    """The answer format's blocks: reasoning, then the committed answer."""
    return Form(f"<{fmt.answer_tag}> tag", fmt.wrap, REASONING)


def compact_tagged_form(fmt: AnswerFormat) -> Form:
    """The answer format's blocks without the working or line breaks: what a tight budget allows."""
    def compose(answer: str, reasoning: str) -> str:
        think = f"<{fmt.reasoning_tag}>{reasoning}</{fmt.reasoning_tag}>\n" if fmt.reasoning_tag else ""
        return f"{think}<{fmt.answer_tag}>{answer}</{fmt.answer_tag}>"
    return Form(f"<{fmt.answer_tag}> tag, no working", compose)


def _bare(lead: str) -> Callable[[str, str], str]:
    def compose(answer: str, reasoning: str) -> str:
        # Any reasoning goes before the answer: the answer is what the completion ends on.
        return f"{lead}{reasoning}\n{answer}" if reasoning else f"{lead}{answer}"
    return compose


def bare_form(prompt: object) -> Form:
    """The answer alone, as a continuation of a text prompt ("... 47 + 38 =" -> " 85")."""
    lead = " " if isinstance(prompt, str) and prompt and not prompt[-1].isspace() else ""
    return Form("bare answer", _bare(lead))


def forms(fmt: AnswerFormat, prompt: object) -> list[Form]:
    """The candidate forms, the preferred first (it wins ties)."""
    return [tagged_form(fmt), compact_tagged_form(fmt), bare_form(prompt)]


def choose(candidates: Sequence[Form], honest_scores: Sequence[float | None]) -> Form:
    """The form whose honest answer the run's rewards pay most; the earlier one on a tie."""
    best, best_score = candidates[0], None
    for form, score in zip(candidates, honest_scores):
        if score is not None and (best_score is None or score > best_score + 1e-9):
            best, best_score = form, score
    return best
