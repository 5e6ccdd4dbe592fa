"""pytest plugin (``-p tests.mutants.plugin``): registers every mutant platform and
``healthy-control`` so that ``--platform=<mutant>`` runs the suite against it."""

from tests.mutants import register_platforms

register_platforms()
