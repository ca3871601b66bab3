"""Placeholder: filled by the length reward family."""
