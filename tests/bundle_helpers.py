"""Crafted report bundles for the self-tests of verify, diff and signing."""

import json
import subprocess
import sys

import conformance
from conformance.certification.bundle import bundle_files
from conformance.certification.catalog import profiles
from conformance.certification.verdict import report
from conformance.certification.verdict.plugin_verdict import (CERTIFIED, NO_PROFILE, NO_PROFILE_REASON,
                                                      NOT_CERTIFIED)

HEADER = {
    "suite": {"name": "pjrt-conformance", "version": conformance.__version__, "git_sha": None},
    "platform": {"name": "cpu", "local_device_count": 1}, "requested_platform": "cpu",
    "environment": {"python": "3.11", "jax": "0.10.2", "jaxlib": "0.10.2", "numpy": "2.4"},
    "hypothesis": {"profile": "ci", "max_examples": 8, "derandomize": True},
    "command": "pjrt-conformance run", "started_utc": "2026-11-22T00:00:00+00:00",
    "duration_s": 1.0,
}


def crafted(tmp_path, name="b", **status):
    """A bundle of a complete run of the default profile on 1 device, every test passing unless overridden."""
    prof = profiles.load(profiles.DEFAULT_PROFILE)
    results = []
    for pid, tier in sorted(prof.tests.items()):
        nodeid = "conformance/" + pid.replace("{device}", "cpu:0")
        results.append(report.Result(nodeid, report.area_of(nodeid),
                                     status.get(pid, "pass"), tier=tier,
                                     message="boom" if pid in status else ""))
    doc = report.build(results, collected=len(results), header=HEADER, profile=prof,
                       device_count=1)
    return bundle_files.write(doc, tmp_path / name).parent


def cli(*args):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], capture_output=True,
                          text=True, timeout=600)


def rewrite(path, fn, *, render=False):
    """Change report.json with ``fn`` and re-hash the manifest (a consistent forgery);
    ``render``: write report.md and report.html again from the changed document too (a
    bundle as another suite version would have written it)."""
    doc = json.loads((path / "report.json").read_text())
    fn(doc)
    (path / "report.json").write_text(json.dumps(doc))
    if render:
        from conformance.certification.rendering import report_html
        from conformance.certification.rendering import report_md

        (path / "report.md").write_text(report_md.render(doc), encoding="utf-8")
        (path / "report.html").write_text(report_html.render(doc), encoding="utf-8")
    names = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()
                   and p.relative_to(path).as_posix() not in (bundle_files.MANIFEST,
                                                              bundle_files.MANIFEST + ".sig"))
    lines = [f"{bundle_files.sha256_file(path / n)}  {n}" for n in names]
    (path / bundle_files.MANIFEST).write_text("\n".join(lines) + "\n")


def main(capsys, *args):
    """``pjrt-conformance ARGS`` in this process (faster than :func:`cli`): an object with
    ``returncode``, ``stdout`` and ``stderr``; an exception escaping main fails the test."""
    import conformance.cli

    capsys.readouterr()
    try:
        rc = conformance.cli.main([str(a) for a in args])
    except SystemExit as exc:          # argparse's usage errors
        rc = exc.code
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), rc, out.out, out.err)


def clean(doc: dict) -> bool:
    """Nothing in the report counts against the plugin: ``certified`` or, for a run on no
    profile (``--profile none``: never a certification), ``not a certification`` for that
    reason alone."""
    return doc["verdict"] == CERTIFIED or (
        doc["verdict"] == NO_PROFILE and doc["verdict_reasons"] == [NO_PROFILE_REASON])


def flagged(doc: dict) -> bool:
    """Something in the report counts against the plugin: ``not certified``, or, for a
    run on no profile, ``not a certification`` with a reason besides that one."""
    return doc["verdict"] == NOT_CERTIFIED or (
        doc["verdict"] == NO_PROFILE and doc["verdict_reasons"][1:] != [])
