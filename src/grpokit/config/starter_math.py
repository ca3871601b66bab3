"""What `grpokit init math` changes in the CPU starter when it trains on synthetic:arithmetic.

Measured on the bundled 135M model, 20 held-out prompts x 2 samples each, no training
(benchmarks/results/init_math_formats.json): asked in chat with the default system prompt
(think, then `<reasoning>`/`<answer>`), it rambled for the whole 128 tokens and never closed an
`<answer>` (format rate 0, 1 of 40 right), so the correctness reward never paid and 20 steps
learned nothing (benchmarks/results/init_math_learning.json before this change). A chat system
prompt with a one-shot example did no better (format 0 at 16 and 40 tokens). The same model
continuing plain text after two worked examples copies their shape: `<reasoning>12 - 5 =
7</reasoning>` then `<answer>7</answer>` in about 20 tokens (format rate 0.48 at 32 tokens), while
its sums are still mostly wrong, which is the headroom the run learns in.
"""
from __future__ import annotations

# Two worked examples, one per operation synthetic:arithmetic writes by default (add, sub), with
# answers that differ from each other so a copied number is not right by chance. The prompt is
# these lines, a blank line, then the question: the completion starts where a third example would.
FEW_SHOT_PROMPT = (
    "Solve each problem. Write the calculation inside <reasoning> and </reasoning>, "
    "then the final number inside <answer> and </answer>.\n\n"
    "Tom has 3 apples. Tom gets 6 more. How many apples does Tom have now?\n"
    "<reasoning>3 + 6 = 9</reasoning>\n<answer>9</answer>\n\n"
    "Ana has 12 pens and gives 5 of them to a friend. How many pens does Ana have now?\n"
    "<reasoning>12 - 5 = 7</reasoning>\n<answer>7</answer>"
)

# Plain-text continuation, not chat: the chat template made the model ignore the example.
MATH_DATA = {"conversational": False, "system_prompt": FEW_SHOT_PROMPT}

# A worked example's reasoning and answer take about 20 tokens: 32 leaves room and cuts the run-on
# text that followed them, so a step costs about a quarter of the 128-token one. LoRA on the 135M
# model moves at 3e-4 (the CPU demo learns addition at that rate, configs/cpu-demo.yaml).
MATH_TRAINING = {"max_completion_length": 32, "learning_rate": 3.0e-4}

# Written above the config, so whoever edits the prompt knows why it is not a chat prompt.
MATH_NOTE = ("# Plain-text prompts after two worked examples, 32 tokens: asked in chat, the bundled model never "
             "closed an <answer> in 128 tokens,\n# so correctness never paid (grpokit/config/starter_math.py).\n")
