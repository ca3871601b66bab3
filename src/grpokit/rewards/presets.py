"""Placeholder: presets land with the reward library."""
