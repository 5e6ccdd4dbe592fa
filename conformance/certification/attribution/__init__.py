"""Attribution: the evidence sources, the rule that attributes every non-pass result, and its re-check."""
