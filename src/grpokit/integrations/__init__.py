"""Bridges from grpokit's rewards to other training engines (verl, ...)."""
