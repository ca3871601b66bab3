"""Do completions cut at the length limit lose reward, or earn more? (`completions/cut_answer_gap`)

A high completions/clipped_ratio alone does not say whether the cut hurts. Three runs look
alike on it and need opposite advice:
- the cut hides the answer (a limit too short for the reasoning, a closing tag cut off): cut
  completions score lower on the rewards that judge the answer than finished ones;
- the answer is already there and the model keeps talking (the CPU demo, whose correctness
  rewards read the first number): cut completions score about the same;
- the reward pays for length (a length hack): cut completions, the longest, score higher,
  and raising the limit would only feed the hack.

The gap is taken within each prompt's group (cut minus finished, where a group has both),
so it compares answers to the same question, then averaged over the groups of the window.
Format and length rewards are left out: they judge the shape a cut changes by design (a
bare-number or closing-tag format, an overlong penalty all pay a cut completion less),
and that is how the model learns to stop, not harm. Tool rewards are left out too: they judge
the episode (a call made, a call that ran), and a call with its result is what makes an episode
long, so they pay cut episodes more by design (tool-math at 64 tokens: cut episodes +0.25 to
+0.67 on them, while the answer reward was 0 on both kinds).
"""
from __future__ import annotations

from typing import Any, Sequence

from grpokit.completions import prompt_text

# Families whose rewards judge a completion's shape or its tool use, not its answer: a cut moves them by design.
SHAPE_FAMILIES = ("format", "length", "tools")
METRIC = "completions/cut_answer_gap"
# What cut completions earn on the answer rewards: where every completion is cut there is no finished one
# to compare with, and this tells a limit that hides the answer (about 0) from talk after it.
CUT_SCORE = "completions/cut_answer_score"


def answer_rewards(names: Sequence[str]) -> list[int]:
    """Indexes of the rewards that judge the answer: every one not of a format, length or tools family."""
    from grpokit.rewards import registry

    out = []
    for i, name in enumerate(names):
        try:
            family = registry.family(name)
        except Exception:  # noqa: BLE001 - a plugin or renamed reward (numeric_match_2) judges content
            family = "custom"
        if family not in SHAPE_FAMILIES:
            out.append(i)
    return out


def stop_ids(model: Any, tokenizer: Any) -> frozenset[int] | None:
    """TRL's test of a finished completion, known before the trainer is built: its last token is one of
    the model's EOS ids (generation_config), the tokenizer's EOS, or the pad token (the tokenizer's, or
    its EOS where it has none, as GRPOTrainer sets it); completions/clipped_ratio counts the others as
    cut. None when neither names an EOS id. tests/rewards/test_cut_gap.py holds it to the trainer's own."""
    tok = getattr(tokenizer, "tokenizer", tokenizer)
    declared = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    eos = [] if declared is None else [declared] if isinstance(declared, int) else list(declared)
    own = getattr(tok, "eos_token_id", None)
    if own is not None:
        eos.append(own)
    if not eos:
        return None
    pad = getattr(tok, "pad_token_id", None) if getattr(tok, "pad_token", None) is not None else own
    return frozenset(int(i) for i in [*eos, pad] if i is not None)


def is_cut(ids: Any, stop_ids: frozenset[int]) -> bool | None:
    try:
        return int(ids[-1]) not in stop_ids
    except (TypeError, IndexError, ValueError):
        return None


class CutGap:
    """Collects, batch by batch, each group's cut-minus-finished answer score and every cut completion's
    answer score; `window()` averages them."""

    def __init__(self, names: Sequence[str], weights: Sequence[float], stop_ids: frozenset[int] | None = None):
        self.answers = answer_rewards(names)
        self.names = list(names)
        self.weights = list(weights)
        self.stop_ids = stop_ids  # None: what ends a completion is unknown, so no gap is taken
        self._gaps: list[float] = []
        self._cut_scores: list[float] = []

    def observe(self, completion_ids: Any, prompts: Any, scores: dict[str, list]) -> None:
        if self.stop_ids is None or not self.answers or not completion_ids or not prompts \
                or len(completion_ids) != len(prompts):
            return
        groups: dict[str, tuple[list[float], list[float]]] = {}
        for i, (ids, prompt) in enumerate(zip(completion_ids, prompts)):
            cut, score = is_cut(ids, self.stop_ids), self._answer_score(scores, i)
            if cut is None or score is None:
                continue
            groups.setdefault(prompt_text(prompt), ([], []))[0 if cut else 1].append(score)
            if cut:
                self._cut_scores.append(score)
        for cut, done in groups.values():
            if cut and done:
                self._gaps.append(sum(cut) / len(cut) - sum(done) / len(done))

    def _answer_score(self, scores: dict[str, list], i: int) -> float | None:
        # Weighted like TRL's total, over the answer rewards that scored this completion.
        parts = [(self.weights[j], scores[self.names[j]][i]) for j in self.answers]
        parts = [(w, s) for w, s in parts if s is not None and s == s]
        return sum(w * s for w, s in parts) if parts else None

    def window(self) -> dict[str, float]:
        gaps, self._gaps = self._gaps, []
        cut, self._cut_scores = self._cut_scores, []
        out = {METRIC: sum(gaps) / len(gaps)} if gaps else {}
        if cut:
            out[CUT_SCORE] = sum(cut) / len(cut)
        return out
