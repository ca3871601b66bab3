"""Command groups of the `grpokit` CLI, one module each."""
