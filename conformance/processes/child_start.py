"""Where every child of :mod:`conformance.processes.runner` starts.

``python -m conformance.processes.child_start MODULE ARGS...`` first binds the process
to its parent (:func:`die_with_parent`: SIGKILL when the parent dies, also when the
parent was SIGKILLed), then runs ``MODULE`` as ``__main__`` with ``ARGS`` after the
module's file in ``sys.argv``, as ``python -m MODULE ARGS...`` would. A child given as
Python source (``python -c``: the runner's self-tests) runs :data:`SOURCE_PRELUDE`, one
line that imports this module and makes the same call, before its own code.

Why a module and not, as before, a string of source prepended to every child: the
binding has to come before the child's own imports (importing jax takes seconds, and a
parent killed meanwhile must take the child with it), and a module imported first does
that as well as a string does, while it is one implementation, shared with the
pytest-xdist workers (:func:`conformance.processes.lifetime.on_configure`), that linters
and type checkers see. To stay first, this module imports the standard library only,
and the packages it sits in (``conformance``, ``conformance.processes``) import nothing
in their ``__init__``. The child needs the project on its path (the runner's
:func:`~conformance.processes.runner.child_env` puts it first on ``PYTHONPATH``).
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import sys

_PR_SET_PDEATHSIG = 1
#: The line a child given as Python source runs first (see the module docstring).
SOURCE_PRELUDE = ("import conformance.processes.child_start; "
                  "conformance.processes.child_start.die_with_parent()\n")


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``;
    elsewhere nothing). Exits at once (status 1) when the parent is already gone."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:
        os._exit(1)


def main(argv: list[str]) -> None:
    """Bind to the parent, then run the module ``argv[0]`` as ``__main__`` with the
    arguments ``argv[1:]``. Exits 2 with a usage line when no module is given."""
    die_with_parent()
    if not argv:
        print("usage: python -m conformance.processes.child_start MODULE [ARG...]",
              file=sys.stderr)
        sys.exit(2)
    name, *args = argv
    sys.argv = [name, *args]  # runpy puts the module's file in sys.argv[0]
    runpy.run_module(name, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
