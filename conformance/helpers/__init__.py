"""Test helpers: dtypes, shapes, strategies, assertions, ULP, references."""
