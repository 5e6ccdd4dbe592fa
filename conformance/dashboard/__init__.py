"""The offline benchmark and conformance dashboard: ``pjrt-conformance dashboard``.

A static site (HTML with inline CSS and SVG: no script, no external asset, so it opens
from disk in an air-gapped lab) rendered from asv results directories
(:mod:`.asv_results`), the committed conformance bundles (:mod:`.bundle_history`) and the
device-limits files of GPU runs (:mod:`.limits`). :mod:`.history` turns asv results
into chart series, :mod:`.charts` draws them, :mod:`.site` writes the pages and
:mod:`.dashboard_command` is the CLI subcommand.
"""
