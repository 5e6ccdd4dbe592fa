"""Which release an interpreter has: ``python -I release_probe.py`` prints one line,
``<jax version> <jaxlib version> <Python version>``, and exits 0 (1 with a traceback when
jax or jaxlib is not installed).

Run by :mod:`conformance.certification.catalog.catalog_bisect` with each release
environment's own interpreter, by file path: that interpreter has jax but not this
project, so this file imports the standard library only and nothing of the suite
(``-I``: neither this file's folder nor the environment's ``PYTHON*`` variables nor the
user's site-packages are on its path).
"""

from __future__ import annotations

import importlib.metadata
import platform


def versions() -> tuple[str, str, str]:
    """``(jax, jaxlib, python)`` versions of this interpreter; PackageNotFoundError when
    jax or jaxlib is not installed."""
    return (importlib.metadata.version("jax"), importlib.metadata.version("jaxlib"),
            platform.python_version())


if __name__ == "__main__":
    print(*versions())
