"""Placeholder: filled by the code reward family."""
