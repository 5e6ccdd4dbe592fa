"""Which cluster this process belongs to: explicit flags, or jax's own launcher detection.

The multi-host mode of ``pjrt-conformance run`` (:mod:`conformance.processes.multihost`)
joins PJRT's coordination service as one process of N. :func:`resolve` decides the three
facts it needs -- the coordinator's ``host:port``, this process's id and the process
count -- the way ``jax.distributed.initialize`` does:

1. explicit ``--coordinator-address HOST:PORT``, ``--process-id I`` and
   ``--process-count N`` (``JAX_COORDINATOR_ADDRESS`` stands in for the first, as for jax);
2. for what is not given, jax's cluster detection (``jax._src.clusters``: Open MPI's
   ``mpirun``, SLURM's ``srun``, Kubernetes with the ``kubernetes`` package, ...);
   ``JAX_COORDINATOR_PORT`` overrides the port jax derives from the job id;
3. nothing given and no launcher: one process (id 0 of 1) on a free loopback port.

``--process-count`` is not called ``--num-processes`` because that option already sets
the process count of the single-host ``multi_process`` area.
"""

from __future__ import annotations

import dataclasses
import os

from conformance.option_error import OptionError

#: Environment variables of launchers jax detects (jax's own names): a launcher whose
#: marker is set but whose other variables are missing is a usage error, not a silent
#: single-process run.
LAUNCHER_ENV = {
    "ompi": ("OMPI_MCA_orte_hnp_uri", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),
    "slurm": ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID",
              "SLURM_LOCALID"),
}
#: Marker variables: a launcher counts as "there" when one of these is set.
_MARKERS = {"ompi": ("OMPI_MCA_orte_hnp_uri", "OMPI_COMM_WORLD_SIZE"),
            "slurm": ("SLURM_PROCID", "SLURM_NTASKS")}


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    """This process's place in the cluster. ``launcher``: ``explicit`` (flags),
    ``none`` (one process, no launcher) or the name of jax's detected cluster
    environment (``ompi``, ``slurm``, ``k8s``, ...)."""

    coordinator: str
    process_id: int
    process_count: int
    launcher: str

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _check_address(address: str, option: str) -> str:
    from runtime._distributed import check_address

    try:
        return check_address(address, option)
    except (TypeError, ValueError):
        raise OptionError(f"{option}: {address!r} is not HOST:PORT with a port in "
                          "1..65535") from None


def _half_there() -> None:
    """OptionError when a launcher's marker is set but jax cannot use its environment."""
    for name, markers in _MARKERS.items():
        if any(m in os.environ for m in markers):
            missing = [v for v in LAUNCHER_ENV[name] if v not in os.environ]
            if missing:
                raise OptionError(f"--multihost: a {name} launch environment is only partly "
                                  f"set ({', '.join(missing)} missing); start the processes "
                                  "with the launcher, or give --coordinator-address, "
                                  "--process-id and --process-count")


def detected(init_timeout: int) -> tuple[str, str | None, int | None, int | None]:
    """(launcher name, coordinator, process count, process id) from jax's cluster
    detection; ("none", None, None, None) outside a launcher. OptionError when a
    launcher is half there or its environment cannot be read."""
    from jax._src import clusters

    _half_there()
    env = next((e for e in clusters.ClusterEnv._cluster_types
                if not e.opt_in_only_method and e.is_env_present()), None)
    if env is None:
        return "none", None, None, None
    try:
        address = env.get_coordinator_address(
            timeout_secs=init_timeout,
            override_coordinator_port=os.environ.get("JAX_COORDINATOR_PORT"))
        return env.name, address, env.get_process_count(), env.get_process_id()
    except (KeyError, ValueError, RuntimeError) as err:
        raise OptionError(f"--multihost: jax detected a {env.name} cluster but could not "
                          f"read it: {type(err).__name__}: {err}") from None


def resolve(*, coordinator_address: str | None, process_id: int | None,
            process_count: int | None, init_timeout: int = 120) -> ClusterSpec:
    """The :class:`ClusterSpec` of this process (see the module docstring).

    ``process_id``/``process_count``: ints or None. Raises OptionError (one line naming
    the option) for a bad address, ``process_count`` < 1, ``process_id`` outside
    ``0..process_count-1``, an id or count without the other and no launcher, or a
    launcher environment that is half there.
    """
    for option, value in (("--process-id", process_id), ("--process-count", process_count)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise OptionError(f"{option}: expected an int, got {value!r}")
    if process_count is not None and process_count < 1:
        raise OptionError(f"--process-count: expected an int >= 1, got {process_count}")
    if process_id is not None and process_id < 0:
        raise OptionError(f"--process-id: expected an int >= 0, got {process_id}")
    address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS") or None
    explicit = address is not None or process_id is not None or process_count is not None
    launcher, det_address, det_count, det_id = "none", None, None, None
    if None in (address, process_id, process_count):
        launcher, det_address, det_count, det_id = detected(init_timeout)
    if launcher != "none" and explicit:
        launcher = f"{launcher}+explicit"
    elif launcher == "none" and explicit:
        launcher = "explicit"
    count = process_count if process_count is not None else det_count
    pid = process_id if process_id is not None else det_id
    if launcher == "none":
        count, pid = (1 if count is None else count), (0 if pid is None else pid)
    if count is None or pid is None:
        raise OptionError("--process-id and --process-count: both are needed outside a "
                          f"launcher (got --process-id={pid}, --process-count={count})")
    if not 0 <= pid < count:
        raise OptionError(f"--process-id: {pid} is not in 0..{count - 1} "
                          f"(--process-count {count})")
    address = address or det_address
    if address is None:
        if count > 1:
            raise OptionError(f"--coordinator-address: needed for {count} processes "
                              "outside a launcher (HOST:PORT of process 0)")
        from conformance.processes.launcher import free_port

        address = f"127.0.0.1:{free_port()}"
    return ClusterSpec(_check_address(address, "--coordinator-address"), pid, count, launcher)
