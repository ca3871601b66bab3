"""Loading a model and its tokenizer (transformers or Unsloth, LoRA, a bundled model), and the
checkpointing names transformers renamed. A leaf: the doctor, evaluation and training all load
models through it, and it imports no stage of the run."""
