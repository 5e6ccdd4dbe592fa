"""Synthetic report.json documents for the renderer self-tests (built with the real
``report.build``, so they have the schema's shape), with or without the fields other
engineers add (``attribution``, ``defect``, ``evidence``)."""

from __future__ import annotations

import copy

import numpy as np

import conformance
from conformance.certification.attribution import attribution_sources
from conformance.certification.results import records
from conformance.certification.verdict import report
from conformance.helpers import ulp_stats

SITE = "/home/alice/venv/lib/python3.11/site-packages"
WORKTREE = "/work/wt/someone"
HEADER = {
    "suite": {"name": "pjrt-conformance", "version": conformance.__version__, "git_sha": None},
    "platform": {"name": "gpu", "local_device_count": 1}, "requested_platform": "cuda",
    "environment": {"python": "3.11", "jax": "0.11.2", "jaxlib": "0.11.2", "numpy": "2.4"},
    "hypothesis": {"profile": "ci", "max_examples": 8, "derandomize": True},
    "command": f"cli.py run --platform cuda -n 6 --output {WORKTREE}/out/rep -- -p x.plugin",
    "started_utc": "2026-11-22T00:00:00+00:00", "duration_s": 1.0,
}
#: Areas with their number of passing tests (many rows, as a real run has).
PASSING = {"client": 40, "collectives": 7, "copy_semantics": 5, "errors": 100, "execute": 200,
           "kernels_elementwise": 290, "lifecycle": 149, "memory_kinds": 30, "sharding": 32,
           "transfer": 70, "types": 39}
DRAWN = ("test_cbrt(\n    xc=<module 'runtime.xla_client' from "
         f"'{WORKTREE}/runtime/xla_client.py'>,\n    dt='float32',\n)")


def _wrong(i: int, op: str) -> records.Result:
    r = records.Result(f"conformance/test_kernels_elementwise.py::test_special[{op}-float32]",
                       "kernels_elementwise", "fail_wrong_result", tier="core",
                       message=(f"AssertionError: out differs from expected in 2 of 18 "
                                f"elements, max {1000 + i} ULP > 4 ULP (atol=0) [execute({op})]"
                                "\n  at (12,): out=-5.5e-16, expected=4.5e-14\n"
                                "Reproduction: execute(cbrt)\n  arg0: float32[18] = [0 1]"),
                       command=f"pytest --pyargs 'conformance.test_kernels_elementwise::"
                               f"test_special[{op}-float32]' --platform=cuda")
    hist = ulp_stats.ulp_histogram(np.array([0] * 13 + [1, 5, 300, 70000, 2**40]), 4)
    r.facts = {"inputs": "  arg0: float32[18] = [0 -0 1 -1 1.17e-38]", "program_text": "module {}",
               "falsifying_example": DRAWN, "hypothesis_blob": None, "ulp_errors": hist}
    return r


def results() -> list[records.Result]:
    """Passing tests in every area of :data:`PASSING`, 5 crashes in ``copy_semantics``
    (two root causes), 3 wrong results and one Hypothesis group in kernels."""
    out = [records.Result(f"conformance/test_{a}.py::test_ok[{i}]", a, "pass")
           for a, n in PASSING.items() for i in range(n)]
    for i in range(5):
        out.append(records.Result(
            f"conformance/test_copy_semantics.py::test_donate[{i}]", "copy_semantics", "crash",
            message=(f"conformance.helpers.assertions.BackendCrash: process killed by "
                     f"{'SIGSEGV' if i < 3 else 'SIGABRT'} instead of raising a Python error "
                     f"[op{i}]\n  File \"{SITE}/jaxlib/xla.py\", line 3"),
            command=f"pytest --pyargs 'conformance.test_copy_semantics::test_donate[{i}]'"))
    out += [_wrong(i, op) for i, op in enumerate(("cbrt", "atan2", "power"))]
    group = records.Result(
        "conformance/test_execute.py::test_group", "execute", "fail_error",
        message="ExceptionGroup: Hypothesis found 2 distinct failures. (2 sub-exceptions)\n"
                "first: AssertionError: out.shape=(8, 0), but should be (1, 0) [add]")
    group.facts = {"falsifying_example": DRAWN, "hypothesis_blob": "@reproduce_failure('6', b'A')"}
    return out + [group]


def doc(*, attributed: bool = False) -> dict:
    """The report document of :func:`results` (no profile); ``attributed``: failures
    carry engineer "defects"' fields, and ``stack_findings`` is set."""
    rs = results()
    d = report.build(rs, collected=len(rs), header=copy.deepcopy(HEADER))  # callers edit it
    if attributed:
        for i, f in enumerate(d["failures"]):
            f["attribution"] = "framework" if f["status"] == "crash" else "plugin"
            f["defect"] = {"id": f"JAXLIB-{i % 2}", "upstream": "not reported yet",
                           "summary": "donated buffer use segfaults"}
            f["evidence"] = [{"source": "catalog", "answer": f["attribution"],
                              "defect": f["defect"]["id"], "upstream": "not reported yet",
                              "note": "reproduces with jaxlib's own CPU client"}]
        attributed_ids = {f["nodeid"]: f for f in d["failures"]}
        for r in d["results"]:
            f = attributed_ids.get(r["nodeid"])
            if f is not None:
                r.update(attribution=f["attribution"], defect=f["defect"],
                         evidence=f["evidence"])
        d["stack_findings"] = attribution_sources.stack_findings(d["results"])
    return d
