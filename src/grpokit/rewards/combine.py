"""Placeholder: combine() lands with the reward library."""
