"""Pieces of the health zoo (benchmarks/health_zoo.py): the sick rewards its cases plant."""
