"""The ``pjrt-conformance`` console script: the CLI, started so that a process short of
memory ends in one line, never an import traceback.

Under ``ulimit -v`` of about 400 MB, importing the CLI (pytest, numpy, jax) failed with a
MemoryError, or an ImportError from a shared library that could not be mapped, and a
traceback with exit 1, which ``verify`` documents as "intact but not certified".
:func:`main` imports :mod:`conformance.cli` itself and turns such a failure into one line
and exit :data:`EXIT_NO_MEMORY` (5, the exit of a run or finalize that found no memory).
This module imports only the standard library. Below what Python itself needs, the
dynamic loader or OpenBLAS ends the process before any Python code runs, with a line of
its own (``cannot allocate memory for thread-local data: ABORT``, exit 127; OpenBLAS'
``Memory allocation still failed``, exit 1): that is outside this module's reach.
"""

from __future__ import annotations

import sys

#: Exit status when the command could not start for want of memory (as ``run`` and
#: ``finalize`` exit when no memory is left to write a bundle).
EXIT_NO_MEMORY = 5


def main(argv: list[str] | None = None) -> int:
    """Import and run :func:`conformance.cli.main`; exit 5 with one line when an import
    runs out of memory (a MemoryError, or an ImportError whose cause is one: ``failed to
    map segment``, ``cannot allocate memory``): the CLI's own import, or one a command
    makes when it starts (``finalize`` and ``run`` import jax only then, so that
    ``verify`` and the other bundle commands start without it)."""
    try:
        from conformance import cli

        return cli.main(argv)
    except MemoryError:
        return _no_memory("MemoryError")
    except ImportError as err:
        text = str(err)
        if not any(s in text.lower() for s in ("memory", "failed to map segment",
                                                 "cannot allocate")):
            raise
        return _no_memory(f"ImportError: {' '.join(text.split())[:200]}")


def _no_memory(what: str) -> int:
    try:
        print(f"pjrt-conformance: not enough memory to start ({what}); raise the process's "
              "memory limit (ulimit -v) and run the command again", file=sys.stderr)
    except MemoryError:
        pass
    return EXIT_NO_MEMORY


if __name__ == "__main__":
    sys.exit(main())
