"""Placeholder: filled by the style reward family."""
