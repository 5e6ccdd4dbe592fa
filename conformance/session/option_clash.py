"""A foreign project's conftest.py that defines one of the suite's options.

The ``pytest11`` entry point loads the suite's plugin into every pytest run of the
environment, and the plugin always registers its options (``--platform``, ...). A
project whose conftest.py defines ``--platform`` too then crashed with pytest's
``ValueError: option dest 'platform' already used`` and a traceback (issue 27 item 8).
:func:`explain` turns that error into one line naming the clash and the workaround.
"""

from __future__ import annotations

import re

from conformance.session import activation
from conformance.session import option_intake

#: The entry-point name of the plugin: ``-p no:<it>`` keeps it out of a run.
ENTRY_POINT = activation.PLUGIN_NAMES[0]


def own_options() -> tuple[str, ...]:
    """Every option name the plugin registers (``--platform``, ``--report-dir``, ...)."""
    return option_intake.NAMES


def explain(err: BaseException) -> str | None:
    """One line for pytest's error about an option defined twice, when the option is one
    of :func:`own_options` (None for any other error)."""
    text = str(err)
    found = re.search(r"option dest '([\w-]+)' already used", text) or \
        re.search(r"option names \{'(--[\w-]+)'", text) or \
        re.search(r"argument (--[\w-]+): conflicting option string", text)
    if found is None:
        return None
    name = found.group(1)
    name = name if name.startswith("--") else "--" + name.replace("_", "-")
    if name not in own_options():
        return None
    return (f"option {name} is defined twice: by a conftest.py (or plugin) of this project "
            f"and by the installed pjrt-conformance plugin ({' '.join(text.split())[:200]}). "
            f"Run this project's tests with '-p no:{ENTRY_POINT}' (or put it in the addopts "
            f"of its pytest configuration), or rename the project's option")
