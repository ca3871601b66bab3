"""The demo's recipes, embedded so `grpokit demo` runs from an installed package.

Each equals its file under configs/ (tests/test_recipes.py checks): `restated` is
configs/cpu-demo.yaml, `words` is configs/cpu-demo-transfer.yaml; the files carry the comments
that say why each setting is what it is.

- `restated`: prompts end with the sum restated (`Answer: 47 + 38 =`); the model learns to
  finish that line. The health zoo's cases are this recipe with one thing made sick.
- `words`: two thirds of the prompts stop at `Answer:` after a question in words; the model learns to
  write the sum and its result itself, which carries to wordings it never trained on
  (benchmarks/results/shape_transfer.json).
"""
from __future__ import annotations

DEMO_YAML = """
name: cpu-demo
description: "Bundled 135M model learns two-digit addition on a laptop CPU: exact answers, partial credit and a bare-number format in one stage, with held-out accuracy"
model:
  name: bundled:smollm2-135m-instruct
  lora: {r: 16, alpha: 32, target_modules: all-linear}
data:
  source: synthetic:addition
  conversational: false
  system_prompt: null
  eval_size: 300
rewards:
  - {name: numeric_match, weight: 1.0, params: {take: first}}
  - {name: numeric_closeness, weight: 0.5, params: {take: first}}
  - {name: regex_format, weight: 0.25}
profile: cpu
training:
  num_generations: 8
  per_device_train_batch_size: 16
  max_completion_length: 6
  learning_rate: 3.0e-4
  temperature: 1.0
  max_steps: 30
  save_steps: 10
eval: {every: 10, prompts: 32, samples: 2}
"""

WORDS_YAML = """name: cpu-demo-transfer
description: "Bundled 135M model learns two-digit addition asked in words: it writes the sum, then its result, on prompt shapes it never saw"
model:
  name: bundled:smollm2-135m-instruct
  lora: {r: 16, alpha: 32, target_modules: all-linear}
data:
  source: synthetic:addition?wording=practice&shape=restated,open,open
  conversational: false
  system_prompt: null
  eval_size: 300
rewards:
  - {name: numeric_match, weight: 1.0, params: {take: line}}
  - {name: numeric_closeness, weight: 0.5, params: {take: line}}
  - {name: restated_expression, weight: 1.0}
profile: cpu
training:
  num_generations: 8
  per_device_train_batch_size: 32
  max_completion_length: 14
  learning_rate: 3.0e-4
  temperature: 1.0
  max_steps: 40
  save_steps: 10
eval: {every: 10, prompts: 32, samples: 2}
"""

RECIPES = {"restated": DEMO_YAML, "words": WORDS_YAML}
