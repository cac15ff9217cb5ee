"""The `docker run` argv of a judged container (pure): no network, every capability dropped,
no-new-privileges, the task's pids / memory / cpus, mounts as (host, container, read-only)
triples. A checks.py container has a read-only root filesystem with empty tmpfs folders where
programs expect to write (/tmp, /var/tmp, /run): one check step's process cannot leave a .pth,
a sitecustomize or a patched pytest in the image's site-packages for the next step to load."""

from __future__ import annotations

from dataclasses import dataclass, field

from ci_eval.run.docker.settings import DockerSettings


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    readonly: bool = False


@dataclass(frozen=True)
class ContainerSpec:
    image: str
    name: str
    command: tuple[str, ...]
    workdir: str
    mounts: tuple[Mount, ...] = ()
    tmpfs: tuple[str, ...] = ()  # empty folders over these paths (a masked solution/)
    env: dict[str, str] = field(default_factory=dict)
    user: str | None = None
    network: str | None = "none"  # None: the engine's default network (agents)
    settings: DockerSettings = field(default_factory=DockerSettings)
    labels: dict[str, str] = field(default_factory=dict)
    read_only: bool = False  # the image's root filesystem read-only (checks.py containers)
    scratch: tuple[str, ...] = ()  # empty writable tmpfs folders (with read_only: /tmp, ...)
    # the image's ENTRYPOINT runs with the command as its arguments (Harbor: an entrypoint that
    # sets up /etc/hosts or starts a server, then `exec "$@"`), instead of being replaced
    keep_entrypoint: bool = False
    # ports below 1024 bindable without a capability, in the container's own network namespace
    # (Harbor's containers keep NET_BIND_SERVICE: an entrypoint serving on port 80)
    low_ports: bool = False
    # on a sidecars' --internal network: INTERNAL_DNS_OPTIONS in its resolv.conf
    internal_network: bool = False


# The resolver options of every container on a sidecars' --internal network. The engine's DNS
# there answers the sidecars' names and nothing else; engines before 25.0 do not even refuse
# the other names, they never answer (moby/moby#43430), so an `apt-get update` or a `curl` of
# the outside waits out glibc's 5 s x 2 attempts per name: 80 s for a test.sh that starts with
# apt-get update, against 2 s with these. The sidecars' names are answered in milliseconds.
INTERNAL_DNS_OPTIONS = ("timeout:1", "attempts:2")


def dns_option_argv() -> list[str]:
    return [word for option in INTERNAL_DNS_OPTIONS for word in ("--dns-option", option)]


def run_argv(spec: ContainerSpec) -> list[str]:
    """The argv after `docker`. Limits: --pids-limit, --memory (swap the same: no swap on
    top), --cpus; everything else of the host stays out (no socket, no device is mounted)."""
    s = spec.settings
    argv = ["run", "--name", spec.name, "--interactive",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--pids-limit", str(s.pids), "--memory", f"{s.memory_mb}m",
            "--memory-swap", f"{s.memory_mb}m", "--cpus", f"{s.cpus:g}",
            "--workdir", spec.workdir]
    for capability in s.capabilities:  # the task's own few, from the engine's default set
        argv += ["--cap-add", capability]
    if spec.network is not None:
        argv += ["--network", spec.network]
    if spec.internal_network:
        argv += dns_option_argv()
    if spec.low_ports:
        argv += ["--sysctl", "net.ipv4.ip_unprivileged_port_start=0"]
    if spec.user:
        argv += ["--user", spec.user]
    for mount in spec.mounts:
        option = f"type=bind,source={mount.source},target={mount.target}"
        argv += ["--mount", option + (",readonly" if mount.readonly else "")]
    if spec.read_only:
        argv += ["--read-only"]
    for path in spec.scratch:  # in the memory limit: a tmpfs is counted in the cgroup's memory
        size = max(1, s.memory_mb // 2)
        argv += ["--tmpfs", f"{path}:rw,exec,nosuid,nodev,size={size}m,mode=1777"]
    for path in spec.tmpfs:
        argv += ["--tmpfs", f"{path}:ro,size=1m"]
    for key, value in sorted(spec.labels.items()):
        argv += ["--label", f"{key}={value}"]
    for key, value in sorted(spec.env.items()):
        argv += ["--env", f"{key}={value}"]
    if spec.keep_entrypoint:
        return [*argv, spec.image, *spec.command]
    return [*argv, "--entrypoint", spec.command[0], spec.image, *spec.command[1:]]


# The task container's command (its entrypoint's arguments) while scripts are exec'd in it:
# Harbor's `sleep infinity` (as a loop busybox's sleep runs too), after marking that the
# entrypoint ran its arguments, i.e. finished setting up.
ENTRYPOINT_DONE = "/tmp/.ci-eval-entrypoint-done"
KEEP_ALIVE = ("sh", "-c", f": > {ENTRYPOINT_DONE} 2>/dev/null; while :; do sleep 3600; done")
# Harbor execs its scripts a while after the container starts (its agent set up first); the
# stand-in for that while, run before the exec'd script: the entrypoint done (or 10 s passed:
# one that runs a server in the foreground never runs its arguments) and the set of listening
# TCP sockets unchanged for SETTLE_SAMPLES samples 0.2 s apart (at most 30 s in all), so a
# server the entrypoint started is listening.
SETTLE_SAMPLES = 8
SETTLE = ("i=0; same=0; prev=x; while [ $i -lt 150 ] && { [ $same -lt "
          f"{SETTLE_SAMPLES} ] || {{ [ ! -e {ENTRYPOINT_DONE} ] && [ $i -lt 50 ]; }}; }}; do "
          "now=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -c ' 0A '); "
          'if [ "$now" = "$prev" ]; then same=$((same+1)); else same=0; fi; '
          'prev=$now; i=$((i+1)); sleep 0.2; done; exec "$@"')


def started_argvs(spec: ContainerSpec) -> tuple[list[str], list[str]]:
    """(the `docker run --detach` argv, the `docker exec` argv) running the command as Harbor
    does in a container whose image has an ENTRYPOINT: the container started with its
    entrypoint and KEEP_ALIVE as its arguments (the hosts and servers it sets up keep running),
    then the command exec'd in it once they are up (the container's user, workdir and
    environment)."""
    start = run_argv(ContainerSpec(**{**spec.__dict__, "command": KEEP_ALIVE,
                                      "keep_entrypoint": True}))
    return ([start[0], "--detach", *start[1:]],
            ["exec", spec.name, "sh", "-c", SETTLE, "sh", *spec.command])
