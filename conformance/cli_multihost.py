"""``pjrt-conformance run --multihost``: certify a cluster as one run of N processes.

Every process of the job runs the same command (``mpirun``, ``srun``, one pod per
index of a Kubernetes Job, or by hand with ``--coordinator-address``, ``--process-id``
and ``--process-count``); see ``docs/cluster.md``. Process 0 writes the one bundle to
``--output``; every process exits with process 0's exit status (0 certified, 1 not
certified, 4 incomplete: a process was lost, a global check did not run, or the run was
cancelled); 2 is a usage error (bad flags, a half-set launcher environment, no
coordination service within ``--join-timeout``), printed as one line.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.processes import cluster

EXIT_USAGE, EXIT_INCOMPLETE = 2, 4
FLAGS = ("multihost", "coordinator_address", "process_id", "process_count")


def add_arguments(run: argparse.ArgumentParser) -> None:
    """The multi-host options of ``pjrt-conformance run``."""
    g = run.add_argument_group("multi-host mode (docs/cluster.md)")
    g.add_argument("--multihost", action="store_true",
                   help="run as one process of a cluster: join jax's distributed runtime "
                        "(launcher detected by jax: Open MPI, SLURM, Kubernetes; or the "
                        "three flags below, which imply --multihost); process 0 writes "
                        "the one bundle")
    g.add_argument("--coordinator-address", default=None,
                   help="HOST:PORT of process 0's coordination service")
    g.add_argument("--process-id", type=int, default=None, help="this process's id, 0..N-1")
    g.add_argument("--process-count", type=int, default=None,
                   help="N, the processes of the cluster (not --num-processes, which sets "
                        "the loopback processes of the multi_process area)")
    g.add_argument("--heartbeat-timeout", type=int, default=10,
                   help="seconds without heartbeats before the coordination service counts "
                        "a process as lost (default: 10)")
    g.add_argument("--join-timeout", type=int, default=120,
                   help="seconds to reach the coordination service (default: 120)")
    g.add_argument("--global-timeout", type=float, default=120,
                   help="seconds each global-mesh scenario may take (default: 120)")


def wanted(ns: argparse.Namespace) -> bool:
    """The multi-host mode was asked for (``--multihost`` or one of its three flags)."""
    # ``not in (None, False)`` read --process-id 0 as absent (0 == False): a single-host run
    return any(getattr(ns, k, None) is not None and getattr(ns, k) is not False for k in FLAGS)


def _finish(got: Any, ns: argparse.Namespace, started: datetime.datetime,
            output: Path) -> tuple[dict[str, Any], Path]:
    """Process 0's bundle of the cluster in ``output``: every process's records and the
    global checks' handed to the one pipeline
    (:func:`conformance.certification.finish.pipeline.finish`); returns (report document,
    path of report.json). OSError or MemoryError when it cannot be written."""
    from conformance.certification.attribution import attribution_sources
    from conformance.certification.catalog import profiles
    from conformance.certification.catalog import waivers
    from conformance.certification.finish import pipeline
    from conformance.certification.verdict import report
    from conformance.processes import cluster_report

    profile = profiles.load(ns.profile) if ns.profile != "none" else None
    rules = tuple(waivers.parse(Path(ns.waivers))) if ns.waivers else ()
    local, ranks = cluster_report.merge_local(got.docs)
    # The cluster's global checks replace the loopback ones of the same id (never twice).
    local = [r for r in local if r.nodeid not in cluster_report.global_nodeids()]
    global_checks = cluster_report.global_results(got.global_outcomes,
                                                  profile.tests if profile else {}, got.lost)
    first = next((d for _, d in sorted(got.docs.items()) if d), None)
    head = ({k: first[k] for k in cluster_report.HEADER_KEYS if k in first} if first
            else report.header(platform=ns.platform, platform_info={}, known=[], argv=sys.argv,
                               cpu_devices=ns.cpu_devices, num_processes=ns.num_processes,
                               programs={"compiles": 0, "cache_hits": 0}, started=started,
                               duration_s=0))
    head["command"] = report.header(platform=ns.platform, platform_info={}, known=[],
                                    argv=sys.argv, cpu_devices=0, num_processes=1, programs={},
                                    started=started, duration_s=0)["command"]
    head["started_utc"] = started.isoformat(timespec="seconds")
    head["duration_s"] = round((datetime.datetime.now(datetime.timezone.utc) - started)
                               .total_seconds(), 2)
    reasons = [got.stopped] if got.stopped else []
    reasons += [f"process {p} sent no per-process report" for p, d in got.docs.items()
                if d is None and p not in got.lost]
    reasons += [f"process {p}'s per-process part was cut short ({d.get('interrupted')})"
                for p, d in got.docs.items() if d and d.get("verdict") == "incomplete"]
    ran = {r.nodeid for r in local + global_checks}
    skipped = [c.name for c in cluster_report.mp_checks.GLOBAL
               if cluster_report.GLOBAL_NODEID.format(c.name) not in ran]
    if skipped and not reasons:
        reasons.append(f"global check(s) {', '.join(skipped)} did not run")
    collected = max([d["summary"]["collected"] for d in got.docs.values() if d] or [0])
    cluster = cluster_report.topology(got.spec.as_dict(), got.docs, got.facts,
                                      got.global_outcomes, got.lost)
    cluster["wall_s"] = {k: round(v, 2) for k, v in got.wall_s.items()}
    # The per-process records arrive attributed (each process's own pipeline); the
    # global checks are attributed here, by the catalog alone.
    records = pipeline.Records(fresh=global_checks,
                               sources=[attribution_sources.catalog_source({})],
                               carried=local)
    run = pipeline.RunHeader(
        header=head, collected=collected + len(cluster_report.mp_checks.GLOBAL),
        profile=profile, declared=tuple(first["declared_capabilities"]) if first else (),
        waivers=rules, device_count=(head.get("platform") or {}).get("local_device_count", 1),
        interrupted="; ".join(reasons) or None,
        record_facts={**{r.nodeid: {"scope": "per_process", "ranks": ranks.get(r.nodeid, [])}
                         for r in local if r.area != "multihost"},
                      **{r.nodeid: {"scope": "global"}
                         for r in local + global_checks if r.area == "multihost"}},
        sections={"cluster": cluster})
    return pipeline.finish(records, run, output)


def _global_area() -> Path:
    """The file of the loopback global-mesh tests, left out of each process's local part
    (an absolute path: pytest makes ``--ignore-glob`` patterns absolute from the current
    directory, so ``*test_multihost.py`` never matched the installed package's file)."""
    import conformance

    return Path(conformance.__file__).resolve().parent / "test_multihost.py"


def run(ns: argparse.Namespace, output: Path,
        child_args: Callable[[argparse.Namespace, Path], list[str]],
        validate: Callable[[argparse.Namespace, Path | None], None]) -> int:
    """The multi-host mode of ``pjrt-conformance run`` (see the module docstring);
    ``child_args(ns, report_dir)``: the command line of the per-process child pytest
    (an argv boundary: the run's options written out), which writes into ``report_dir``;
    ``validate(ns, output or None)``: the run's option checks (OptionError), with the
    output directory checked (and made) in process 0 only."""
    from conformance.certification.verdict import plugin_verdict
    from conformance.processes import multihost
    from conformance.session.validate import OptionError

    started = datetime.datetime.now(datetime.timezone.utc)
    try:
        spec = cluster.resolve(coordinator_address=ns.coordinator_address,
                               process_id=ns.process_id, process_count=ns.process_count,
                               init_timeout=ns.join_timeout)
        for option in ("heartbeat_timeout", "join_timeout", "global_timeout"):
            if not getattr(ns, option) > 0:
                raise OptionError(f"--{option.replace('_', '-')}: expected seconds > 0, got "
                                  f"{getattr(ns, option)}")
        if ns.sign_key is not None or ns.random_seed:
            raise OptionError("--sign-key and --random-seed are not supported with "
                              "--multihost (sign the bundle afterwards with 'sign')")
        validate(ns, output if spec.process_id == 0 else None)
    except OptionError as err:
        print(f"pjrt-conformance: {err}", file=sys.stderr)
        return EXIT_USAGE
    tag = f"process {spec.process_id} of {spec.process_count}"
    print(f"pjrt-conformance: multi-host {tag} (launcher {spec.launcher}, coordinator "
          f"{spec.coordinator})", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"pjrt-mh-p{spec.process_id}-"))
    local = child_args(ns, scratch) + [f"--ignore={_global_area()}"]
    try:
        link, got = multihost.run(spec, local, report_dir=scratch,
                                  heartbeat_s=ns.heartbeat_timeout,
                                  join_timeout_s=ns.join_timeout, local_timeout_s=24 * 3600,
                                  global_timeout_s=ns.global_timeout)
    except Exception as err:  # noqa: BLE001 - ConnectionError, XlaRuntimeError (bind)
        print(f"pjrt-conformance: {tag} could not join the cluster at {spec.coordinator}: "
              f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}",
              file=sys.stderr)
        return EXIT_USAGE
    code = None
    if spec.process_id == 0:
        t0 = time.monotonic()
        doc, path = _finish(got, ns, started, output)
        code = {"certified": 0, "not certified": 1,
                "not a certification": 1}.get(doc["verdict"], EXIT_INCOMPLETE)
        print(f"\npjrt-conformance: cluster of {spec.process_count} process(es) -- "
              f"{plugin_verdict.headline(doc, upper=True)}")
        for reason in doc["verdict_reasons"]:
            print(f"  - {reason}")
        print(f"report bundle: {path.parent}/ (written in {time.monotonic() - t0:.1f} s); "
              f"check it with: pjrt-conformance verify {path.parent}", flush=True)
    code = multihost.finish(link, got, code)
    sys.stdout.flush()
    sys.stderr.flush()
    import os

    os._exit(code)  # jaxlib's client and service may block an interpreter exit
