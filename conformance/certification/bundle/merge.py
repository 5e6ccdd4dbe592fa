"""``pjrt-conformance merge PART... --output DIR``: one bundle from shard bundles.

Each part is the bundle of a ``pjrt-conformance run --shard I/N``. :func:`load_parts`
checks that every part is an intact bundle
(:func:`conformance.certification.bundle.bundle_files.verify`) of a shard run; :func:`merge`
checks that they can be merged (:func:`conformance.certification.bundle.merge_check.problems`)
and writes the merged bundle:
``report.json`` (verdict recomputed from the union of the parts' results; the parts
recorded under ``merge``), ``report.md``, ``report.html``, ``junit.xml``, ``repro/``,
``results.jsonl.xz`` (the parts' logs, one after the other, packed by
:mod:`conformance.certification.results.runlog`) and ``parts/<k>/`` (the
part's ``report.json``, ``MANIFEST.sha256`` and signature, if any), all listed in
``MANIFEST.sha256``. ``verify`` then re-checks the parts it embeds
(:func:`conformance.certification.bundle.merge_check.verify_embedded`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conformance.certification.bundle import bundle_files
from conformance.certification.bundle import merge_check
from conformance.certification.bundle import reportfile
from conformance.certification.results import runlog
from conformance.certification.bundle import signing

_PART_FILES = ("report.json", signing.MANIFEST, signing.SIGNATURE)


class MergeError(Exception):
    """Why the parts cannot be merged (one line, naming the part); ``exit_code`` 2 for a
    usage error (wrong or mismatched parts), 3 for a part that is not intact or malformed."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def check_output(out: Path, paths: list[Path]) -> None:
    """Raise MergeError (2) when the merged bundle ``out`` would be written into, under or
    over one of the parts ``paths`` (the same directory, a directory inside one, or one
    that holds one: ``--force`` would replace it); symlinks are resolved."""
    target = Path(out).resolve()
    for k, path in enumerate(paths, 1):
        part = Path(path).resolve()
        if target == part or part in target.parents:
            raise MergeError(f"--output {out} is {'part' if target == part else 'inside part'}"
                             f" {k} ({path}); merge never writes into its inputs: give a new "
                             "directory", 2)
        if target in part.parents:
            raise MergeError(f"--output {out} holds part {k} ({path}); merge never writes "
                             "over its inputs: give a new directory", 2)


def load_parts(paths: list[Path]) -> list[dict[str, Any]]:
    """The report.json of each part, in order. Raises MergeError: fewer than 2 parts or
    a path that does not exist (2); not a bundle, not intact or malformed (3)."""
    if len(paths) < 2:
        raise MergeError(f"a merge needs at least 2 parts (the bundles of --shard 1/N .. "
                         f"N/N), got {len(paths)}", 2)
    docs = []
    for k, path in enumerate(paths, 1):
        path = Path(path)
        if not path.exists():
            raise MergeError(f"part {k}: {path} does not exist", 2)
        if not (path / "report.json").is_file():
            raise MergeError(f"part {k} ({path}): not a report bundle (no report.json)", 3)
        checked = bundle_files.verify(path)
        if checked.problems:
            more = f" (+{len(checked.problems) - 1} more)" if len(checked.problems) > 1 else ""
            raise MergeError(f"part {k} ({path}): not intact: {checked.problems[0]}{more}", 3)
        try:
            docs.append(reportfile.load(path))
        except reportfile.MalformedReport as err:   # verify reported it already; be sure
            raise MergeError(f"part {k} ({path}): {err}", 3) from None
    return docs


def clear_earlier(out: Path) -> None:
    """Remove ``out/parts/`` when it holds only the part files an earlier merge wrote
    (for ``--force``; the rest of the bundle is the run's output check's business)."""
    parts = Path(out) / merge_check.PARTS_DIR
    if parts.is_symlink() or not parts.is_dir():   # a link is never followed: the output
        return                                     # check refuses it
    dirs = list(parts.iterdir())
    if all(not d.is_symlink() and d.is_dir() and d.name.isdigit() and all(
            not f.is_symlink() and f.is_file() and f.name in _PART_FILES
            for f in d.iterdir()) for d in dirs):
        shutil.rmtree(parts)


def check(docs: list[dict[str, Any]]) -> None:
    """Raise MergeError (2) with the first of :func:`merge_check.problems` of the parts'
    reports ``docs``: parts that do not agree or do not cover their selection once."""
    found = merge_check.problems(docs)
    if found:
        more = f" (+{len(found) - 1} more problem(s))" if len(found) > 1 else ""
        raise MergeError(found[0] + more, 2)


def merge(paths: list[Path], docs: list[dict[str, Any]], out: Path, command: str
          ) -> tuple[dict[str, Any], Path]:
    """Write the merged bundle of the parts ``paths`` (``docs``: their reports, from
    :func:`load_parts`) into ``out`` (an empty directory); return the merged report and
    the path of its report.json. Raises MergeError (see :func:`check`)."""
    check(docs)
    out = Path(out)
    parts, extra = [], []
    for k, (path, doc) in enumerate(zip(paths, docs), 1):
        rel = f"{merge_check.PARTS_DIR}/{k}"
        (out / rel).mkdir(parents=True, exist_ok=True)
        for name in _PART_FILES:
            if (Path(path) / name).is_file():
                shutil.copyfile(Path(path) / name, out / rel / name)
                extra.append(f"{rel}/{name}")
        parts.append({"index": doc["shard"]["index"], "path": rel,
                      "manifest_sha256": bundle_files.sha256_file(out / rel / signing.MANIFEST),
                      "report_sha256": bundle_files.sha256_file(out / rel / "report.json"),
                      "signed": (out / rel / signing.SIGNATURE).is_file(),
                      "started_utc": doc["started_utc"], "duration_s": doc["duration_s"],
                      "collected": doc["summary"]["collected"], "verdict": doc["verdict"]})
    logs = [runlog.locate(p) for p in paths]
    if all(logs):
        try:
            runlog.write_packed((r for log in logs for r in runlog.records(log)), out)
        except (OSError, ValueError) as err:
            raise MergeError(f"the parts' results logs cannot be merged: {err}", 3) from None
        extra.append(runlog.PACKED)
    doc = merge_check.combine(docs, parts, command)
    return doc, bundle_files.write(doc, out, extra=tuple(extra))
