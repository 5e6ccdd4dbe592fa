"""Versions of the stack under the runtime, for reports and known-failure conditions.

``JAXLIB_VERSION`` and ``JAX_VERSION`` are the installed ``jaxlib.__version__``
and ``jax.__version__`` strings (e.g. ``"0.10.2"``). The runtime supports
jaxlib 0.10.x (Python 3.11+), 0.11.x and 0.12.x (Python 3.12+; runtime._compat).
"""

from __future__ import annotations

import jax
import jaxlib

__all__ = ["JAXLIB_VERSION", "JAX_VERSION"]

JAXLIB_VERSION: str = jaxlib.__version__
JAX_VERSION: str = jax.__version__
