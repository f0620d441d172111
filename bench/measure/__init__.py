"""The measurements behind bench/bench.py, one section a module, and the report that prints them."""
