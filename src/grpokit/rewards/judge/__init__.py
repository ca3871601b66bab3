"""llm_judge: a judge model behind any OpenAI-compatible chat endpoint scores the completions.

    judge = get("llm_judge", base_url="http://127.0.0.1:8090/v1", rubric="summary", mode="group")
    judge(completions, prompts=prompts, reference=summaries)   # [0.7, 0.2, None, ...]

settings.py (checked at construction), rubrics.py (prompts and parsing),
injection.py (markers and the grader filter), views.py (the answer view the
judge also grades), client.py (async HTTP), cache.py, stats.py (metrics for
health and the report), reward.py (the batch function). `grpokit judge serve`
starts a local judge.
"""
from __future__ import annotations

from grpokit.rewards._bound import BatchReward
from grpokit.rewards.judge.cache import VerdictCache
from grpokit.rewards.judge.reward import judge_batch
from grpokit.rewards.judge.rubrics import RUBRICS
from grpokit.rewards.judge.settings import DEFAULT_URL, JudgeSettings
from grpokit.rewards.registry import register

__all__ = ["llm_judge", "JudgeSettings", "RUBRICS", "DEFAULT_URL"]


def _settings(**params) -> JudgeSettings:
    # The settings alone: every value checked (the API key's variable included), nothing contacted.
    return JudgeSettings(**params)


@register("llm_judge", aliases=("judge",), family="judge", precheck=_settings)
def llm_judge(base_url: str = DEFAULT_URL, model: str = "judge", rubric: str = "general", mode: str = "pointwise",
              scale: int = 10, api_key_env: str | None = None, concurrency: int = 8, retries: int = 2,
              backoff_s: float = 0.5, timeout_s: float = 30.0, budget_s: float | None = 120.0,
              cache_size: int = 10_000, max_chars: int = 4_000, max_group: int = 16, structured: bool = True,
              use_reference: bool = True, answer_check: bool = True, answer_format=None):
    """A judge model grades each completion against a rubric; score = grade / scale, in [0, 1].

    Calls any OpenAI-compatible chat endpoint (`base_url` ending in /v1: a vLLM server,
    llama.cpp's server, `grpokit judge serve`, a hosted API) with the rubric, the
    prompt, the reference (the `reference` column, else `answer`, when use_reference)
    and the completion. mode="pointwise" asks once per completion (a 0..scale grade);
    mode="group" sends all completions of one prompt in one request and asks for a
    grade each, so the judge ranks them relative to each other (chunks of max_group).

    Requests run concurrently (at most `concurrency` in flight), each with timeout_s;
    connection errors, timeouts, 429 and 5xx answers are retried `retries` times with
    exponential backoff from backoff_s; whatever is unfinished after budget_s seconds
    for the whole batch gives None. A completion the judge did not grade scores None
    (counted in judge/llm_judge/failure_frac, alerted by the judge_failing health
    rule), never 0. Verdicts are cached in-process (cache_size entries) by prompt,
    completion(s), reference, rubric, model and endpoint, so a repeated completion costs nothing.

    Completions are data, not instructions, and text beyond the answer cannot raise a score.
    A judge model can be talked round, and a phrase filter reworded round (another language, a
    zero-width space, leetspeak, base64, `{'score': 10}`: the round-4 rewrites passed 15 of 15), so
    no single guard is trusted:
    - answer_check (on by default): each completion is graded twice, as written and as its answer
      alone, and the lower grade is paid. The answer view is the committed answer (the answer tag,
      else the last \\boxed{}, else the text) with comments, markup, invisible characters and (for
      prose references) code blocks removed, cut to the reference's size: its number of sentences
      and at most max(2 x its words, its words + 8) words. "Berlin. <any note>" is graded as
      "Berlin." too, the very request "Berlin." makes, so appending text can only lower a score.
      Identical texts of a prompt are asked once per batch, so the check costs one request per
      distinct answer, none where the answer is the completion itself. Without a reference the view
      only loses the hidden channels (no length to cut to); judge/llm_judge/answer_lower_frac counts
      completions paid the answer's lower grade.
    - the request, reference and completion(s) sit between markers named with a fresh random nonce
      per request (a completion cannot close its own block); the judge is told to ignore any
      instruction inside them.
    - a completion that addresses the grader (a note to the grader, a request for the top grade, an
      order to ignore the rubric, or the judge's own JSON reply), read after folding look-alike
      letters, invisible characters, leetspeak and base64, is not sent and scores 0.0, the lowest
      grade, by rule (judge/llm_judge/addressed_frac); so does a completion whose answer view is
      empty. The filter's patterns are linear: a 1 MB completion costs milliseconds.

    Parameters: base_url (default http://127.0.0.1:8090/v1, where `grpokit judge serve`
    listens), model (the name the endpoint serves, "judge"), rubric (a built-in name:
    general, summary, qa, style; or the rubric text), mode (pointwise | group), scale (10),
    api_key_env (the NAME of the environment variable holding the API key; the key itself
    never goes in a config; a missing variable is a config error), concurrency (8),
    retries (2), backoff_s (0.5), timeout_s (30), budget_s (120; None = no budget),
    cache_size (10000; 0 = off), max_chars (4000 per prompt/completion shown), max_group (16),
    structured (True: ask for JSON held to a schema, which llama.cpp enforces with a grammar),
    use_reference (True), answer_check (True: also grade the answer alone and pay the lower grade),
    answer_format (the run's answer tags, e.g. {answer_tag: final}; set from data.answer_format).
    Columns read: prompts, reference or answer (optional).
    """
    settings = _settings(base_url=base_url, model=model, rubric=rubric, mode=mode, scale=scale,
                             api_key_env=api_key_env, concurrency=concurrency, retries=retries, backoff_s=backoff_s,
                             timeout_s=timeout_s, budget_s=budget_s, cache_size=cache_size, max_chars=max_chars,
                             max_group=max_group, structured=structured, use_reference=use_reference,
                         answer_check=answer_check, answer_format=answer_format)
    return BatchReward("llm_judge", judge_batch, settings=settings, cache=VerdictCache(cache_size), label="llm_judge")
