"""connect() of jaxlib's distributed runtime client to an address where no coordination
service listens ends the process instead of raising.

Found by the PJRT conformance suite
(conformance/test_multi_process.py::test_wrong_address_fails_within_init_timeout).
Standalone: jaxlib's distributed runtime client (jaxlib._jax, as jax.distributed uses it)
and the standard library; the connect() runs in a child process, which this script
watches. Exit status: 0 the defect is absent (connect raises within the init timeout),
3 present: the child was ended by jaxlib instead (jaxlib 0.10.2: LOG(FATAL), SIGABRT,
about init_timeout + 5 s later; 0.8.0: LOG(QFATAL), exit status 1, with "Terminating
process" / "RegisterTask" in its log).

    python docs/repro/connect_wrong_address.py
"""
import subprocess
import sys

CHILD = r"""
import socket, sys, time
import jaxlib
from jaxlib import _jax

print(f"jaxlib {jaxlib.__version__}")
with socket.socket() as s:  # a port nobody listens on (closed again at once)
    s.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{s.getsockname()[1]}"
client = _jax.get_distributed_runtime_client(address, 0, init_timeout=3,
                                             shutdown_on_destruction=False)
print(f"connect() to {address} (nothing listens), init_timeout 3 s")
print("  expected: raises within about 3 s", flush=True)
start = time.monotonic()
try:
    client.connect()
except Exception as err:
    print(f"  observed: raised {type(err).__name__} after {time.monotonic() - start:.1f} s")
    print("RAISED", flush=True)
    sys.exit(0)
print("  observed: connect() returned", flush=True)
"""

if __name__ == "__main__":
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=120)
    print(p.stdout, end="")
    if "RAISED" in p.stdout:
        sys.exit(0)
    how = f"signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}"
    print(f"  observed: the process was ended ({how}) instead of connect() raising")
    print((p.stderr or "")[-600:])
    sys.exit(3)
