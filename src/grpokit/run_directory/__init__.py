"""A run directory (runs/<name>/): the name of every file in it, and how to read and append them.

A leaf: training, health, evaluation, reporting and the demo all spell a file's name
through `layout` and read JSON-lines through `jsonl`, so a name or a reading rule
changes in one place. See docs/architecture.md for what each file holds.
"""
