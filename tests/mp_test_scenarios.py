"""Worker scenarios that misbehave on purpose, for the launcher's self-tests (loaded in the
workers through PJRT_CONFORMANCE_WORKER_PRELOAD and imported by the test itself)."""

import os
import signal
import time

from conformance.processes import mp_worker


@mp_worker.scenario
def hang(ctx):
    mp_worker.mark("hanging")
    while True:
        time.sleep(1)


@mp_worker.scenario
def die(ctx):
    if ctx.pid == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"alive": ctx.pid}
