"""The README's two commands, read from the README itself (stdlib only: it runs before
anything is installed).

The README's first fenced ``bash`` block holds exactly two commands, each on the line
after a comment ``# 1. ...`` / ``# 2. ...``: 1 installs the suite and runs the main job,
2 installs it with the test extra and runs the tests. ``.ci/run`` runs them verbatim and
``tests/test_readme_commands.py`` checks this parser and the commands, so the README and
CI cannot drift apart.

    python3 .ci/readme_commands.py 1      # prints command 1
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def commands(text: str) -> dict[int, str]:
    """``{1: command, 2: command}`` from the first fenced ``bash`` block of ``text``.
    Raises ValueError naming what is missing when the block, a numbered comment or its
    command line is absent, or when a number appears twice."""
    block = re.search(r"^```bash\n(.*?)^```", text, re.S | re.M)
    if block is None:
        raise ValueError("README: no fenced ```bash block")
    lines = block.group(1).splitlines()
    found: dict[int, str] = {}
    for i, line in enumerate(lines):
        m = re.match(r"#\s*(\d+)\.", line.strip())
        if m is None:
            continue
        n = int(m.group(1))
        if n in found:
            raise ValueError(f"README: command {n} is numbered twice")
        if i + 1 >= len(lines) or not lines[i + 1].strip() or lines[i + 1].lstrip().startswith("#"):
            raise ValueError(f"README: comment '# {n}.' is not followed by a command line")
        found[n] = lines[i + 1].strip()
    for n in (1, 2):
        if n not in found:
            raise ValueError(f"README: no command numbered {n} in the first bash block")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("1", "2"):
        print("usage: readme_commands.py 1|2", file=sys.stderr)
        return 2
    try:
        print(commands(README.read_text(encoding="utf-8"))[int(argv[0])])
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
