"""The child of :func:`conformance.processes.isolation.run_snippet`: one snippet against
the backend under test, in a process of its own (a crash costs one test).

``python -m conformance.session.isolation_child SPEC_JSON DEVICE_INDEX SNIPPET`` opens
the client of ``SPEC_JSON`` (a :class:`conformance.session.backend.BackendSpec` as JSON:
its setup files, the registry, the client, as an xdist worker does; ``-``: the JSON is
read from standard input, as :func:`~conformance.processes.isolation.run_snippet` gives
it, since its plugin options may be larger than one argument may be), then runs the
Python source ``SNIPPET`` as the program's top level with these names bound (the
snippets of the areas are written against them): ``spec``, ``client``, ``device`` (local
device ``DEVICE_INDEX``), ``xc`` (the platform's module API,
:func:`conformance.session.api.module_api`), ``xla_client`` (runtime's), ``np``,
``sys``, ``backend``, ``api``. The snippet's output and exit status are the parent's
result; its traceback names the file ``<snippet>``.

It lives in ``session`` because it opens the backend, which the ``processes`` layer that
starts it may not import: that layer names this module only.
"""

from __future__ import annotations

import builtins
import sys
from typing import Any

import numpy as np

from conformance.session import backend
from runtime import xla_client


def namespace(spec_json: str, device_index: int) -> dict[str, Any]:
    """The names a snippet sees (see the module docstring), the client opened."""
    spec = backend.BackendSpec.from_json(spec_json)
    spec.run_setup_files()
    spec.configure()
    client = spec.open()
    device = client.local_devices()[device_index]
    from conformance.session import api  # once the client is open, as it always was

    return {"__name__": "__main__", "__builtins__": builtins, "sys": sys, "np": np,
            "backend": backend, "xla_client": xla_client, "spec": spec, "client": client,
            "device": device, "api": api, "xc": api.module_api(spec.platform)}


def main(argv: list[str]) -> None:
    """Open the client of ``argv[0]`` and run the snippet ``argv[2]`` on its local device
    ``argv[1]``."""
    spec_json, device_index, snippet = argv
    if spec_json == "-":
        spec_json = sys.stdin.read()
    code = compile(snippet, "<snippet>", "exec")
    exec(code, namespace(spec_json, int(device_index)))  # noqa: S102 - the test's snippet


if __name__ == "__main__":
    main(sys.argv[1:])
