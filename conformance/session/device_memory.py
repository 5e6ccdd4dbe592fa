"""GPU memory shared by the suite's processes (one client per xdist worker and child).

XLA's GPU client preallocates 75% of the device's memory by default
(``XLA_PYTHON_CLIENT_PREALLOCATE``). A run with ``-n 6`` starts six clients on one
GPU, plus the children of the subprocess tests: the second client already finds
too little memory, and correct backends then fail with RESOURCE_EXHAUSTED, cuSolver
or cuFFT "internal" errors, "no supported devices found", or dead workers. Before
any client starts, a suite process on a platform other than ``cpu`` therefore asks
for on-demand allocation, unless the user set any of the allocator variables
(then theirs stand, and the report's environment shows them).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

ALLOCATOR_VARIABLES = ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
                       "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR")


def share_device_memory(platform: str,
                        environ: MutableMapping[str, str] | None = None) -> str | None:
    """Set ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` in ``environ`` (default: this
    process's environment, which workers and children inherit) for a ``platform``
    other than 'cpu' when none of ``ALLOCATOR_VARIABLES`` is set. Returns the setting
    made ('NAME=value') or None when nothing was changed."""
    env = os.environ if environ is None else environ
    if platform == "cpu" or any(name in env for name in ALLOCATOR_VARIABLES):
        return None
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    return "XLA_PYTHON_CLIENT_PREALLOCATE=false"
