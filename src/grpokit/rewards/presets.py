"""Reward presets: tested reward mixes for common tasks, by registered name.

A preset is declarative -- a list of {name, weight, params} -- so a YAML config
and `grpokit init` can copy it, and `preset(name)` builds it into reward
callables with matching weights for TRL:

    funcs, weights = preset("math_reasoning")
    GRPOTrainer(..., reward_funcs=funcs, args=GRPOConfig(reward_weights=weights, ...))

The module constants (MATH_REASONING_REWARDS, MATH_REASONING_WEIGHTS, ...) are
built on first access, so importing grpokit.rewards never fails even while a
reward a preset names is missing; the failure, if any, names the reward.
"""
from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass

from grpokit.rewards.registry import RewardConfigError, canonical, get


@dataclass(frozen=True)
class Preset:
    name: str
    description: str  # what the mix trains for, in one or two sentences
    columns: tuple[str, ...]  # data-set columns the rewards read
    rewards: tuple[dict, ...]  # {"name", "weight", "params"}
    # The system prompt a config for this preset starts with; None: the answer format's default
    # (<reasoning>/<answer>), which is wrong for presets whose rewards read something else.
    system_prompt: str | None = None

    def spec(self) -> list[dict]:
        """The reward list as a config would write it (a fresh copy)."""
        return copy.deepcopy(list(self.rewards))


def _r(name: str, weight: float, **params) -> dict:
    return {"name": name, "weight": weight, "params": params}


# No worked example: an echo of the prompt must match no gold answer and cite nothing.
# Citations go after the answer block: inside it, `60 euros [1]` is not the gold answer `60 euros`
# to exact_match, and fuzzy_match pays it less.
KB_QA_SYSTEM_PROMPT = (
    "Answer the question using only the numbered documents. Think it through inside <reasoning> and </reasoning>. "
    "Then write the short answer alone inside <answer> and </answer>, and on the same line, right after </answer>, "
    "put the numbers of the documents the answer comes from in square brackets."
)

# Question answering reads no tags: the math default (<reasoning>/<answer>) would ask for a format no
# reward of these presets pays, and spend the completion budget on it. exact_match wants the answer
# alone; the judge reads an answer as a person would, so a short sentence is fine there.
QA_SYSTEM_PROMPT = ("Answer the question with the short answer alone (a word, a name, a number or a short "
                    "phrase), with nothing before or after it.")
QA_JUDGE_SYSTEM_PROMPT = ("Answer the question directly and correctly in one or two short sentences, the answer "
                          "itself first. Reply with the answer only, no reasoning.")

# Correctness carries most of the weight in every preset: format and style
# terms shape how the answer is written but must never outbid being right.
_PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "math_reasoning",
            "Step-by-step math solutions that end in a checkable final answer: the answer must be "
            "mathematically equal to `answer`; the reasoning/answer format is learned incrementally; "
            "visible steps earn a little; looping text is penalised.",
            ("answer",),
            (
                _r("math_equivalence", 2.0),
                _r("incremental_format", 0.5),
                _r("reasoning_quality", 0.25),
                _r("repetition_penalty", 0.5),
            ),
        ),
        Preset(
            "code_generation",
            "Programs that pass the data set's `tests` when run in the sandbox; code that parses and "
            "sits in a fenced block earns a little on the way; looping text is penalised.",
            ("tests",),
            (
                _r("code_execution", 2.0),
                _r("code_syntax_valid", 0.5),
                _r("code_block_format", 0.25),
                _r("repetition_penalty", 0.25),
            ),
            "Write a correct Python function for the task. Reply with one ```python code block and nothing else.",
        ),
        Preset(
            "summarization",
            "Summaries that cover the `reference` summary's words and phrases (ROUGE-like overlap), "
            "stay short, do not loop and stay in the document's script.",
            ("reference",),
            (
                _r("reference_overlap", 1.0),
                _r("max_length_penalty", 0.25, max_len=150),
                _r("repetition_penalty", 0.5),
                _r("language_consistency", 0.25),
            ),
            "Summarize the text in one or two short sentences. Reply with the summary only.",
        ),
        Preset(
            "qa",
            "Short factual answers: exact match with `answer` pays most, a near miss (fuzzy match) "
            "pays some; answers stay in the question's script and do not loop.",
            ("answer",),
            (
                _r("exact_match", 1.0),
                _r("fuzzy_match", 0.5),
                _r("language_consistency", 0.25),
                _r("repetition_penalty", 0.25),
            ),
            QA_SYSTEM_PROMPT,
        ),
        Preset(
            "summarization_judge",
            "Summaries graded by a judge model (llm_judge, group mode: each prompt's summaries ranked side by "
            "side against the summary rubric and the `reference`), with overlap, length and looping terms as "
            "a floor that needs no judge. Start the judge with `grpokit judge serve` or set base_url.",
            ("reference",),
            (
                _r("llm_judge", 1.0, rubric="summary", mode="group"),
                _r("reference_overlap", 0.5),
                _r("max_length_penalty", 0.25, max_len=150),
                _r("repetition_penalty", 0.5),
            ),
            "Summarize the text in one or two short sentences. Reply with the summary only.",
        ),
        Preset(
            "qa_judge",
            "Open answers graded by a judge model (llm_judge, pointwise, the QA rubric, told the `answer` "
            "as a reference) where exact match is too strict; a near miss of the gold answer still pays a "
            "little, and answers stay in the question's script and do not loop.",
            ("answer",),
            (
                _r("llm_judge", 1.0, rubric="qa"),
                _r("fuzzy_match", 0.5),
                _r("language_consistency", 0.25),
                _r("repetition_penalty", 0.25),
            ),
            QA_JUDGE_SYSTEM_PROMPT,
        ),
        Preset(
            "json_output",
            "Structured output: one JSON object that validates against the row's `schema` and holds the "
            "values of the gold object in `answer`, field by field (a schema alone pays an object of empty "
            "strings and zeros as much as the right one).",
            ("schema", "answer"),
            (
                _r("json_field_match", 2.0),
                _r("json_schema", 1.0),
                _r("json_format", 0.5, whole=True),
            ),
            "Reply with a single JSON object that follows the schema the request gives, and nothing else.",
        ),
        Preset(
            "kb_qa",
            "Knowledge-base QA with citations: each prompt shows the row's `sources` as numbered documents; the "
            "answer inside <answer> must match `answer` (fuzzy match, so a near miss pays some, a wrong number "
            "nothing), and the document it comes from is cited by number after </answer>, `[2]`; only documents "
            "that contain the answer pay, and a wider range or list pays its share.",
            ("answer", "sources"),
            (
                _r("fuzzy_match", 2.0, threshold=0.8),  # a near miss pays; "140 euros" for "14 euros" does not
                # The prompt's own [1], [2] labels pay nothing; a document pays when it has every word and
                # number of `answer` (an `answer_sources` column naming it is sharper: citation's answer_sources).
                _r("citation", 1.0, after_answer=True, answer_column="answer"),
                _r("incremental_format", 0.25),
                _r("repetition_penalty", 0.25),
            ),
            KB_QA_SYSTEM_PROMPT,
        ),
    )
}

# Short names people type; "math-reasoning" and "MATH_REASONING" work too.
_ALIASES = {"math": "math_reasoning", "code": "code_generation", "summary": "summarization", "json": "json_output",
            "summary_judge": "summarization_judge", "kb": "kb_qa", "knowledge_base": "kb_qa",
            "knowledge_base_qa": "kb_qa", "rag": "kb_qa"}


def presets() -> list[str]:
    """Every preset name, sorted."""
    return sorted(_PRESETS)


def get_preset(name: str) -> Preset:
    """The declarative preset for `name` (aliases and any case/dash style accepted)."""
    key = name.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key in _PRESETS:
        return _PRESETS[key]
    close = difflib.get_close_matches(key, [*_PRESETS, *_ALIASES], n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise RewardConfigError(f"unknown preset {name!r}.{hint} Presets: {', '.join(presets())}")


def preset_spec(name: str) -> list[dict]:
    """The preset's rewards as config entries: [{"name", "weight", "params"}, ...]."""
    return get_preset(name).spec()


def preset(name: str) -> tuple[list, list[float]]:
    """Build preset `name`: (reward callables, matching weights)."""
    spec = get_preset(name)
    funcs = []
    for entry in spec.rewards:
        try:
            canonical(entry["name"])
        except RewardConfigError as exc:
            raise RewardConfigError(f"preset {spec.name!r} uses reward {entry['name']!r}: {exc}") from exc
        funcs.append(get(entry["name"], **entry["params"]))
    return funcs, [float(entry["weight"]) for entry in spec.rewards]


def _constant_names() -> dict[str, tuple[str, int]]:
    names = {}
    for key in _PRESETS:
        names[f"{key.upper()}_REWARDS"] = (key, 0)
        names[f"{key.upper()}_WEIGHTS"] = (key, 1)
    return names


def __getattr__(attr: str):
    # Built on access, not at import: see the module docstring.
    constants = _constant_names()
    if attr in constants:
        key, part = constants[attr]
        if part == 1:
            return [float(e["weight"]) for e in _PRESETS[key].rewards]
        return preset(key)[0]
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_constant_names()])
