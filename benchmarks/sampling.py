"""asv's sampling attributes shared by every ``bench_*`` module (each imports them at
module level; asv reads an attribute from the method, then the class, then the module,
and ``asv run -a`` overrides all).

Chosen so that a ``time_`` value's 99% interval (asv's distribution-free interval of the
median) is narrow on a shared 2-core machine and one nightly round of every benchmark
fits in 20 minutes: 2 rounds (two processes, so a bad process layout shows) of 10 to 15
samples each (at most 8 seconds of samples per round once 10 are taken), each sample
the mean of as many calls as fill ``sample_time`` seconds. 20 samples put the 99%
interval of the median between the 4th and 17th smallest (asv's ``quantile_ci``, the
binomial interval of ``stats_ci_99_a``/``stats_ci_99_b``). ``python -m benchmarks.spread``
checks the ±5% rule on stored results; ``track_`` benchmarks take their own samples
(:mod:`benchmarks.pairing`, :mod:`benchmarks.intervals`).
"""

rounds = 2
repeat = (10, 15, 8.0)  # (min samples, max samples, max seconds) per round
sample_time = 0.01  # seconds per sample, at least (asv picks ``number``)
warmup_time = 0.05  # seconds of calls before the first sample of a round
