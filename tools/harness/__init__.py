"""The portability harness behind tools/portability.py: the variants, the probe, the venvs, one run, its outcome."""
