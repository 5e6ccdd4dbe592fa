"""Measure a backend's transcendental accuracy against the tolerance table.

``python -m conformance.programs.accuracy_survey [SEED] [N]`` evaluates every op of
:data:`conformance.helpers.tolerances.FLOAT64_OPS` with jax's default backend on ``N``
(default 2,000) uniform random inputs in the op's catalog domain (log-uniform for
positive domains), in float64 and float32, and prints per op and dtype the largest ULP
distance and relative error (in eps) from mpmath's correctly rounded result, the
NumPy reference's own largest ULP distance, and the table's budget. The numbers of
docs/tolerances.md come from it. Needs ``jax_enable_x64`` (set here).
"""

from __future__ import annotations

import sys

import numpy as np

from conformance.helpers import mpmath_reference, tolerances, ulp


def survey(seed: int = 0, n: int = 2000) -> list[dict]:
    """Rows ``{op, dtype, max_ulp, max_rel_eps, numpy_max_ulp, budget}`` (normal, finite
    results only). Raises ValueError for ``n < 1``."""
    if n < 1:
        raise ValueError(f"survey: argument 'n' must be >= 1, got {n}")
    import jax

    from conformance.programs import catalog
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(seed)
    rows = []
    for name in tolerances.FLOAT64_OPS:
        op = catalog.ELEMENTWISE[name]
        for dt in (np.float64, np.float32):
            fi = np.finfo(dt)
            lo, hi = max(op.domain[0], -float(fi.max)), min(op.domain[1], float(fi.max))
            draw = ((lambda: np.exp(rng.uniform(np.log(lo), np.log(hi), n))) if lo > 0
                    else (lambda: rng.uniform(lo, hi, n)))
            xs = [draw().astype(dt) for _ in range(op.arity)]
            out = np.asarray(jax.jit(op.fn)(*xs))
            ref = mpmath_reference.correctly_rounded(name, xs, dt)
            with np.errstate(all="ignore"):
                npref = np.asarray(op.reference(*[x.astype(np.float64) for x in xs])).astype(dt)
            ok = np.isfinite(ref) & np.isfinite(out) & (np.abs(ref) >= fi.tiny)
            rel = np.abs(out[ok].astype(np.float64) - ref[ok]) / np.abs(ref[ok].astype(np.float64))
            rows.append(dict(
                op=name, dtype=np.dtype(dt).name,
                max_ulp=int(ulp.ulp_distance(out[ok], ref[ok]).max(initial=0)),
                max_rel_eps=float(rel.max(initial=0.0) / fi.eps),
                numpy_max_ulp=int(ulp.ulp_distance(npref[ok], ref[ok]).max(initial=0)),
                budget=tolerances.ulp_bound(name, np.dtype(dt).name)))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the survey; exit status 1 when an op exceeds its budget."""
    args = sys.argv[1:] if argv is None else argv
    rows = survey(int(args[0]) if args else 0, int(args[1]) if len(args) > 1 else 2000)
    import jax
    over = 0
    for r in rows:
        flag = "" if r["max_ulp"] <= r["budget"] else "  OVER BUDGET"
        over += bool(flag)
        print(f"jax {jax.__version__} {r['op']:9s} {r['dtype']}: max {r['max_ulp']} ULP "
              f"({r['max_rel_eps']:.2f} eps), numpy reference {r['numpy_max_ulp']} ULP, "
              f"budget {r['budget']} ULP{flag}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
