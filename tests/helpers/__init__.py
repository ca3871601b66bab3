"""What the tests and the benchmarks share: synthetic runs, hostile completions, judge attacks.

Imported as tests.helpers.* (tests/conftest.py puts the checkout root on sys.path; the benchmarks
run from it). The tests import no benchmark as a library: what both need lives here, and only a
test of a benchmark's own logic imports that benchmark (tests/test_no_benchmark_imports.py).
"""
