"""Ratios of each operation to its references from a pytest-benchmark JSON file.

    pytest benchmarks --benchmark-only --benchmark-json=bench.json
    python -m benchmarks.ratios bench.json

Prints, per group (one class and parameter set), every timing divided by each
``ref_`` timing of the group (median times; > 1 means slower than the reference),
for transfers the bandwidth in GB/s, and each ``track_ratio_*`` value: the paired
ratio of :mod:`benchmarks.pairing` (operation and reference timed side by side), the
same number the asv dashboard shows.
"""

from __future__ import annotations

import json
import re
import sys


def ratios(doc: dict) -> list[str]:
    groups: dict[str, dict[str, float]] = {}
    paired: list[str] = []
    for b in doc["benchmarks"]:
        name = b["name"].split("[", 1)[1].rsplit("]", 1)[0] if "[" in b["name"] else b["name"]
        op = name.split(".")[2].split("[")[0] if name.count(".") >= 2 else name
        groups.setdefault(b["group"] or "", {})[op] = b["stats"]["median"]
        if op.startswith("track_ratio_") and "value" in b.get("extra_info", {}):
            paired.append(f"{b['group'] or ''}: {op} {b['extra_info']['value']:.2f}x (paired)")
    lines = []
    for group, times in sorted(groups.items()):
        refs = {k: v for k, v in times.items() if "_ref_" in k}
        size = re.search(r"\[(\d+)", group)
        for op, t in sorted(times.items()):
            if op in refs or op.startswith(("peakmem_", "track_")):
                continue
            parts = [f"{op} {t * 1e6:.1f} us"]
            if size and "Host" in group:  # HostToDevice, DeviceToHost: [nbytes...]
                parts.append(f"{int(size.group(1)) / t / 1e9:.2f} GB/s")
            parts += [f"{t / r:.2f}x {ref.replace('time_ref_', '')}" for ref, r in refs.items()]
            lines.append(f"{group}: " + ", ".join(p for p in parts if p))
    return lines + sorted(paired)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print("\n".join(ratios(json.load(f))))
