"""DistributedRuntimeService.shutdown() with a client attached ends its own process
(jaxlib 0.7/0.8) before it returns.

Found by the PJRT conformance suite
(conformance/test_multi_process.py::test_service_shuts_down_with_clients_attached) on
jaxlib 0.8.0, CPU. Standalone: plain jaxlib (two child processes join one service hosted by
the first, which then shuts it down; the parent watches them). Exit status: 0 the defect is absent, 3 present.

    python docs/repro/service_shutdown_ends_host.py

Expected: shutdown() returns (within its shutdown_timeout); what the host's own client
does afterwards is another matter. Observed on jaxlib 0.8.0: about 20 ms into shutdown()
the host's client polls the error "Failed to send RPC to coordination service" and
jaxlib ends the process ("Terminating process because the JAX distributed service
detected fatal errors", exit status 1): shutdown() never returns.
"""
import socket
import subprocess
import sys

CHILD = r"""
import sys, time
from jaxlib import _jax
port, pid = int(sys.argv[1]), int(sys.argv[2])
if pid == 0:
    service = _jax.get_distributed_runtime_service(f"127.0.0.1:{port}", 2, shutdown_timeout=5)
else:
    time.sleep(1)
client = _jax.get_distributed_runtime_client(f"127.0.0.1:{port}", pid, init_timeout=20,
                                             shutdown_timeout=5, shutdown_on_destruction=False)
client.connect()
client.wait_at_barrier("joined", 30000)
if pid == 0:
    print("shutdown_start", flush=True)
    service.shutdown()
    print("shutdown_returned", flush=True)
time.sleep(3)  # a client may end its process now: not the defect
"""

if __name__ == "__main__":
    import jaxlib

    print(f"jaxlib {jaxlib.__version__}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(port), str(i)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in (0, 1)]
    outs = [q.communicate(timeout=60) for q in procs]
    p = subprocess.CompletedProcess(procs[0].args, procs[0].returncode, *outs[0])
    returned = "shutdown_returned" in p.stdout
    print(f"child exit status {p.returncode}; shutdown() returned: {returned}")
    if not returned:
        print((p.stderr or "")[-800:])
    sys.exit(0 if returned else 3)
