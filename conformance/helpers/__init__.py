"""Test helpers: dtypes (dh), shapes (sh), strategies (hh), assertions (ph), ULP, references."""
