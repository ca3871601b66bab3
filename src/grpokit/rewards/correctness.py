"""Placeholder: filled by the correctness reward family."""
