"""Before/after evaluation on held-out prompts, scored with the training rewards.

A training reward can saturate while real accuracy falls, so `evaluate` samples
k completions per held-out prompt and reports, besides the mean of every
reward: the task accuracy (the share of samples the accuracy reward counts as
correct), pass@1 and pass@k (the unbiased estimator of Chen et al. 2021), the
format rate (the answer format's reasoning block then its answer block present:
`<reasoning>` then `<answer>` by default; see grpokit.answer_format), the mean completion
length in tokens and the share cut off at max_new_tokens.

    from grpokit.evaluate import evaluate, compare, write_eval
    before = evaluate(base, tok, held_out, [fmt, acc], [0.5, 2.0], k=4)
    after = evaluate(tuned, tok, held_out, [fmt, acc], [0.5, 2.0], k=4)
    write_eval("runs/x/eval.json", before, after)

Sampling is seeded, so the base and the trained model see the same prompts
with the same random stream.
"""
from grpokit.evaluate.checkpoint import evaluate_checkpoint, find_checkpoint  # noqa: F401
from grpokit.evaluate.generation import evaluate, generate_samples  # noqa: F401
from grpokit.evaluate.metrics import (  # noqa: F401
    compare,
    default_accuracy,
    format_table,
    has_format,
    pass_at_k,
    score_samples,
    write_eval,
)
