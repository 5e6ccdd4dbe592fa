"""The child of :func:`conformance.session.pjrt_plugin_info.framework_api_version`.

``python -m conformance.session.pjrt_plugin_probe LIBRARY`` loads and initializes the
PJRT plugin ``LIBRARY`` with jaxlib's own ``xla_client`` (nothing of the suite, so that
nothing else registers or opens a backend first). jaxlib logs both C API versions to
stderr as it initializes the plugin; the parent reads that line.
"""

from __future__ import annotations

import sys

from jaxlib import xla_client


def main(argv: list[str]) -> None:
    """Load and initialize the plugin library ``argv[0]`` (under the name ``probe``)."""
    xla_client.load_pjrt_plugin_dynamically("probe", argv[0])
    xla_client.initialize_pjrt_plugin("probe")


if __name__ == "__main__":
    main(sys.argv[1:])
