"""PJRT conformance suite: Hypothesis-driven pytest areas run through ``runtime``.

Run with ``pytest --pyargs conformance --platform=NAME`` or
``pjrt-conformance run --platform NAME``.
"""

__version__ = "0.1.0"
