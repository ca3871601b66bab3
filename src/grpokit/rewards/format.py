"""Placeholder: filled by the format reward family."""
