"""The suite's run options, declared once for the pytest plugin and ``pjrt-conformance run``.

Both front ends declare the same options from :data:`SUITE_OPTIONS` (:func:`add_to`), so
they cannot drift apart. Their parsed values become one typed object,
:class:`conformance.session.run_options.RunOptions`, built once per run
(:mod:`conformance.session.option_intake`): ``pjrt-conformance run`` hands it to the
session as an object, not as command-line strings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.certification.catalog import profiles

SUITE_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("--platform", dict(default="cpu",
                        help="platform of runtime.xla_bridge to certify (default: cpu)")),
    ("--cpu-devices", dict(type=int, default=8,
                           help="number of devices of the CPU client (default: 8)")),
    ("--num-processes", dict(type=int, default=2,
                             help="processes of the multi_process area, each with its own "
                                  "client joined through the distributed runtime on loopback "
                                  "(default: 2; 1 skips the area)")),
    ("--plugin-library", dict(default=None,
                              help="path of a PJRT plugin shared library to certify; "
                                   "registered under --platform")),
    ("--plugin-options", dict(default=None, help="create options of --plugin-library: a JSON "
                                                 "object or a JSON file")),
    ("--expect-platform", dict(default=None,
                               help="platform string the client must report (default: "
                                    "--platform); a client reporting another platform stops "
                                    "the run")),
    ("--profile", dict(default=profiles.DEFAULT_PROFILE,
                       help=f"certification profile: a shipped name "
                            f"({profiles.DEFAULT_PROFILE}), a profile .json, or 'none' "
                            "(completeness not checked)")),
    ("--declare", dict(action="append", default=[],
                       help="declared capabilities, comma-separated and repeatable: "
                            + ", ".join(profiles.CAPABILITIES))),
    ("--declare-file", dict(default=None, help="file of declared capabilities, one a line")),
    ("--float-controls", dict(default="auto",
                              help="declared denormal handling of arithmetic per float width "
                                   "(Vulkan-style float controls): 'auto' (default: xla-cpu "
                                   "for jaxlib's CPU client, else ieee), a preset ('ieee', "
                                   "'xla-cpu') or dtype=mode pairs such as "
                                   "'float32=ftz+daz,float64=preserve' (modes: preserve, ftz, "
                                   "daz, ftz+daz)")),
    ("--waivers", dict(default=None, help="TOML file of waivers (test glob, issue URL, expiry "
                                          "date, reason)")),
    ("--known-failures", dict(action="append", default=[],
                              help="deprecated: old-format file of known failures (test id "
                                   "glob | requirement | reason), or a defect catalog .toml; "
                                   "repeatable, added to --defects")),
    ("--defects", dict(action="append", default=[],
                       help="defect catalog applied as strict xfail and used to attribute "
                            "results: 'shipped' (default: conformance/defects/*.toml), "
                            "'none', a .toml file or a directory of them; repeatable")),
    ("--reference-differential", dict(default="off", choices=["auto", "off"],
                                      help="re-run failing tests on jaxlib's built-in CPU "
                                           "client (the reference) to attribute them: 'auto' "
                                           "when the platform under test is not the reference, "
                                           "'off' (default for pytest; 'auto' for "
                                           "pjrt-conformance run)")),
    ("--reference-timeout", dict(type=float, default=300.0,
                                 help="seconds the reference differential may take "
                                      "(default: 300)")),
    ("--shard", dict(default=None, metavar="I/N",
                     help="run shard I of N of the selected tests, balanced by recorded "
                          "durations (pytest-split); merge the N bundles with "
                          "'pjrt-conformance merge'")),
    ("--shard-durations", dict(default=None, metavar="NAME-or-FILE",
                               help="per-test durations that balance --shard: a shipped name "
                                    "(default: cpu) or a JSON file of test id -> seconds "
                                    "('pjrt-conformance durations' writes one)")),
]


def add_to(add_option: Callable[..., Any]) -> None:
    """Declare every suite option with ``add_option`` (pytest's ``group.addoption`` or
    argparse's ``add_argument``)."""
    for name, kwargs in SUITE_OPTIONS:
        add_option(name, **kwargs)

