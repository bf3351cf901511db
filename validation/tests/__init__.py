"""Tests of the validation scripts, run from the source root:

  PYTHONPATH=collect DTPERF=build/src/dtperf python3 -m unittest discover -s validation/tests -t validation

validation/ is the top-level folder: its scripts import one another by plain name, as they do
when run as `python3 validation/NAME.py`. The collector comes from PYTHONPATH (or an install).
"""
