"""The literate-programming tool behind tangle.py (see docs/tangle.md): small modules, dependencies one way."""
