"""A missed_heartbeat_callback of jaxlib's distributed runtime client is never called:
the process aborts with std::bad_cast when the coordination service reports a dead peer.

Standalone: jaxlib's distributed runtime (jaxlib._jax, as jax.distributed uses it) and
the standard library; two fresh child processes on loopback. Exits 3 while the defect is
present (the survivor is killed by a signal, or its callback never fires), 0 when fixed.
Expected: process 0's callback is called with the error status, process 0 exits 0.
Observed on jaxlib 0.10.2 and 0.11.2: "terminate called after throwing an instance of
'std::bad_cast'" and SIGABRT in process 0.
"""
import socket
import subprocess
import sys

CHILD = """
import os, sys, time
from jaxlib import _jax
pid, address = int(sys.argv[1]), sys.argv[2]
if pid == 0:
    service = _jax.get_distributed_runtime_service(address, 2, heartbeat_timeout=2)
calls = []
client = _jax.get_distributed_runtime_client(
    address, pid, heartbeat_timeout=2, init_timeout=30, shutdown_on_destruction=False,
    missed_heartbeat_callback=lambda status: calls.append(str(status)))
client.connect()
client.wait_at_barrier("joined", 30000)
if pid == 1:
    os._exit(17)  # the peer dies without leaving
deadline = time.monotonic() + 30
while not calls and time.monotonic() < deadline:
    time.sleep(0.05)
print("callback called" if calls else "callback never called", flush=True)
os._exit(0 if calls else 3)
"""

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{s.getsockname()[1]}"
procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(pid), address],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
         for pid in (0, 1)]
out, err = procs[0].communicate(timeout=120)
procs[1].wait(timeout=120)
rc = procs[0].returncode
observed = (f"process 0 killed by signal {-rc}" if rc < 0 else out.strip() or f"exit {rc}")
if "bad_cast" in err:
    observed += " (stderr: std::bad_cast)"
print("process 1 dies; process 0 has a missed_heartbeat_callback")
print("  expected: callback called, process 0 exits 0")
print(f"  observed: {observed}")
sys.exit(0 if rc == 0 else 3)
