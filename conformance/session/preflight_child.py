"""The child of :func:`conformance.processes.preflight.describe`: open the client once.

``python -m conformance.session.preflight_child SPEC_JSON`` (a
:class:`conformance.session.backend.BackendSpec` as JSON; ``-``: read it from standard
input, as :func:`~conformance.processes.preflight.describe` gives it, since its plugin
options may be larger than one argument may be) runs the spec's setup files,
configures the registry and opens the client, as an xdist worker would. When that fails
it prints one line ``PJRT_PREFLIGHT <json error text>`` and exits 3; otherwise it prints
``PJRT_PREFLIGHT_INFO <json>``, the client's platform facts
(:func:`conformance.session.backend.describe`), when it can say them, and exits 0. A
crash or a hang is the parent's to see (:mod:`conformance.processes.runner`).

It lives in ``session`` because it opens the backend (:mod:`.backend`), which the
``processes`` layer that starts it may not import: that layer names this module only.
"""

from __future__ import annotations

import json
import sys

from conformance.processes.preflight import INFO, MARK
from conformance.session import backend


def main(argv: list[str]) -> int:
    """Open the client of the spec ``argv[0]`` (``-``: standard input); the exit status
    (0 opened, 3 not)."""
    spec = backend.BackendSpec.from_json(sys.stdin.read() if argv[0] == "-" else argv[0])
    try:
        spec.run_setup_files()
        spec.configure()
        client = spec.open()
    except Exception as err:  # noqa: BLE001 - any error: the backend cannot start
        print(MARK + json.dumps(str(err)), flush=True)
        return 3
    try:
        print(INFO + json.dumps(backend.describe(client, spec)), flush=True)
    except Exception:  # noqa: BLE001 - the facts are optional: the client opened
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
