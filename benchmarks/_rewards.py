"""Stand-ins for `incremental_format` and `numeric_match`, registered only when the real ones
(grpokit.rewards.format / .correctness, written on other branches) are absent, so the
benchmarks run on this branch before the merge. After the merge the real rewards win.
"""
from __future__ import annotations

import re

from grpokit.completions import extract_final_number, extract_tag, texts
from grpokit.rewards import names, register
from grpokit.rewards.registry import named

_MARKERS = ("<reasoning>", "</reasoning>", "<answer>", "</answer>")


def _incremental(text: str) -> float:
    score = sum(0.25 for m in _MARKERS if text.count(m) == 1)
    end = text.rfind("</answer>")
    if end >= 0:
        tail = "".join(text[end + len("</answer>"):].split())
        score -= min(0.001 * len(tail), 0.5)
    return score


def _number(text):
    if text is None:
        return None
    m = re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    return float(m[-1]) if m else None


STAND_INS: dict[str, bool] = {}


def ensure() -> None:
    have = set(names())
    STAND_INS.update({n: n not in have for n in ("incremental_format", "numeric_match")})
    if "incremental_format" not in have:
        @register("incremental_format", family="format")
        def incremental_format(**params):
            """Stand-in: 0.25 per reasoning/answer marker present once, minus trailing text."""
            return named("incremental_format", lambda completions, **kw: [_incremental(t) for t in texts(completions)])
    if "numeric_match" not in have:
        @register("numeric_match", family="correctness")
        def numeric_match(**params):
            """Stand-in: 1.0 when the answer tag's (or the last) number equals the gold number."""
            def reward(completions, answer=None, **kw):
                out = []
                for text, gold in zip(texts(completions), answer or [None] * len(completions)):
                    g = _number(str(gold)) if gold is not None else None
                    if g is None:
                        out.append(None)
                        continue
                    got = _number(extract_tag(text, "answer")) if extract_tag(text, "answer") else _number(extract_final_number(text))
                    out.append(1.0 if got is not None and abs(got - g) < 1e-6 else 0.0)
                return out
            return named("numeric_match", reward)
