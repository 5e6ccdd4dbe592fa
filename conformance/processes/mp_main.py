"""The multi-process worker's command: ``python -m conformance.processes.mp_main SPEC``.

Started by :mod:`conformance.processes.launcher` (through :mod:`.runner`), once per
process of a scenario. It registers the scenarios (:mod:`.mp_scenarios`,
:mod:`.mh_scenarios`) and runs :func:`conformance.processes.mp_worker.main`. A module of
its own, not ``-m conformance.processes.mp_worker``: run as ``__main__``, that module
would be a second copy of itself, and the scenarios (and those of the modules named in
``PJRT_CONFORMANCE_WORKER_PRELOAD``) would register in the imported copy's registry,
not in the one ``main`` reads.
"""

from __future__ import annotations

import sys

from conformance.processes import mh_scenarios, mp_scenarios  # noqa: F401 - registers them
from conformance.processes import mp_worker


def main(argv: list[str]) -> int:
    """:func:`conformance.processes.mp_worker.main` (``argv[1]``: the SPEC JSON)."""
    return mp_worker.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
