"""Regenerate ``stablehlo_spec_ops.json`` from the StableHLO specification's text.

Usage (a maintainer's tool, not run by the suite)::

    git -C stablehlo show COMMIT:docs/spec.md > spec.md
    python -m conformance.programs.spec_ops_extract spec.md --commit COMMIT \\
        --versions 1.16.0-1.18.1 > conformance/programs/stablehlo_spec_ops.json

Every ``### name`` heading of the spec's ``## Ops`` section is an op. The element
types an op allows are read from the type column of its first tensor input (or,
for ops without one and for the ops in :data:`TYPED_BY_RESULT`, its first output):
the words ``boolean``, ``signed integer``, ``integer``, ``floating-point``,
``complex`` and quoted type names, or "any tensor" for ``tensor``/``values``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

#: Spec element type groups in the suite's dtype names (numpy / ml_dtypes).
GROUPS: dict[str, list[str]] = {
    "bool": ["bool"],
    "signed": ["int2", "int4", "int8", "int16", "int32", "int64"],
    "unsigned": ["uint2", "uint4", "uint8", "uint16", "uint32", "uint64"],
    "float": ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
              "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2",
              "float8_e5m2fnuz", "float8_e8m0fnu", "bfloat16", "float16", "float32",
              "float64"],
    "complex": ["complex64", "complex128"],
}
#: Spec type names written in backquotes, in the suite's dtype names.
NAMED = {"i1": "bool", "si32": "int32", "si64": "int64", "ui32": "uint32", "ui64": "uint64",
         "f32": "float32", "f64": "float64"}
#: Ops whose interesting element type is their result's (their operand is a state/token).
TYPED_BY_RESULT = ("rng_bit_generator", "rng", "iota", "constant", "partition_id",
                   "replica_id", "infeed", "recv")
#: Ops typed by a later operand than the first (``select``: its first is the predicate).
TYPED_BY_OPERAND = {"select": 1}
_NOT_TENSOR = ("constant of", "enum of", "function", "tensor constant", "`si64`", "`token`",
               "a region", "attribute", "tensor future")


def _rows(body: str, heading: str) -> list[str]:
    m = re.search(rf"#### {heading}\n(.*?)(\n#### |\Z)", body, re.S)
    if not m:
        return []
    types = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and not set(line) <= set("|- ") and cells[0] not in (
                "Label", "Name"):
            types.append(cells[2] if cells[0].startswith("(") else cells[1])
    return types


def element_types(type_text: str) -> list[str]:
    """Element types (suite dtype names) that one spec type cell allows."""
    text = type_text.lower()
    if "token" in text and "tensor" not in text:
        return ["token"]
    found = [NAMED[n] for n in re.findall(r"`([a-z0-9]+)`", text) if n in NAMED]
    if found:
        return found
    out: list[str] = []
    if "boolean" in text:
        out += GROUPS["bool"]
    if "signed integer" in text and "unsigned" not in text:
        out += GROUPS["signed"]
    elif "integer" in text:
        out += GROUPS["signed"] + GROUPS["unsigned"]
    if "floating-point" in text:
        out += GROUPS["float"]
    if "complex" in text:
        out += GROUPS["complex"]
    if not out:  # "tensor", "tensors", "values", "tuple": any element type
        out = [t for g in GROUPS.values() for t in g]
    return out


def extract(spec_text: str) -> list[dict]:
    """One ``{"name", "typed_by", "element_types"}`` per op of the spec's Ops section
    (``typed_by``: ``"operand N"`` or ``"result"``, the value whose element type counts).
    Raises ValueError when ``spec_text`` has no ``## Ops`` or ``## Execution`` section."""
    start, end = spec_text.find("\n## Ops"), spec_text.find("\n## Execution")
    if start < 0 or end < start:
        raise ValueError("spec_text: no '## Ops' section followed by '## Execution'")
    ops_section = spec_text[start:end]
    parts = re.split(r"\n### ([a-z_0-9]+)\n", ops_section)
    ops = []
    for name, body in zip(parts[1::2], parts[2::2]):
        inputs = [t for t in _rows(body, "Inputs") + _rows(body, "Arguments")
                  if not any(w in t for w in _NOT_TENSOR) or "tensor or" in t]
        outputs = _rows(body, "Outputs")
        by_result = name in TYPED_BY_RESULT or not inputs
        index = TYPED_BY_OPERAND.get(name, 0)
        cells = outputs if by_result else inputs[index:]
        if name == "rng_bit_generator":
            cells = outputs[1:]  # its first output is the new state (ui64)
        typed_by = "result" if by_result else f"operand {index}"
        ops.append({"name": name, "typed_by": typed_by,
                    "element_types": element_types(cells[0]) if cells else ["token"]})
    return ops


def dumps(doc: dict) -> str:
    """``doc`` as JSON with one line per group and per op (reviewable diffs)."""
    lines = [f'{{"source": {json.dumps(doc["source"])},', ' "groups": {']
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in doc["groups"].items()]
    lines[-1] = lines[-1].rstrip(",")
    lines += [" },", ' "ops": [']
    lines += [f"  {json.dumps(op)}," for op in doc["ops"]]
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines + [" ]", "}"]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", help="docs/spec.md of openxla/stablehlo")
    parser.add_argument("--commit", required=True, help="the stablehlo commit of spec.md")
    parser.add_argument("--versions", required=True,
                        help="StableHLO dialect versions whose spec this text is")
    args = parser.parse_args(argv)
    with open(args.spec, encoding="utf-8") as f:
        ops = extract(f.read())
    doc = {"source": {"repository": "https://github.com/openxla/stablehlo",
                      "path": "docs/spec.md", "commit": args.commit,
                      "stablehlo_versions": args.versions},
           "groups": GROUPS, "ops": ops}
    sys.stdout.write(dumps(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
