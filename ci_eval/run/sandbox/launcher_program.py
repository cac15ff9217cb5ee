"""The sandbox launcher: one interpreter per harness process that forks every sandboxed command.

Started by ci_eval/run/sandbox/launcher.py through launcher_boot_program.py (`python -I -S -c
TEXT SOCKET_FD CONFIG`, CONFIG: where ci_eval is). It takes requests on the socket, one at a time:

  request  {"mode": "exec" | "checks", "argv", "env", "cwd", "sandbox": sandbox_program.View as JSON,
           "user": bool, "net": bool, "sys_path", "checks", "gated": bool, "held": [paths]},
           with the file descriptors [result, output, status] (+ [verdict] for checks, + [gate]
           when gated, + one per held path) passed alongside (SCM_RIGHTS)
  result   one JSON object per line on the result pipe, {"kind": ResultKind, "value"} (`tell`,
           read back by `read_result`), written by the launcher: pid N once the command's
           process exists (its process group is the command's), exit N when it ended (the
           exit code as subprocess reports it: negative for a signal); error MESSAGE when it
           could not fork. No exit (EOF): the launcher died.

Per request, what `setpriv --pdeathsig KILL unshare --mount --pid --fork --kill-child
--mount-proc --propagation private [--user --map-root-user] [--net] python -I -S sandbox_program.py ...`
did, without starting a program or an interpreter, in one process: the launcher forks it
straight into the new namespaces (clone(2) with the namespace flags, `fork_into`: what os.fork
does, Python's bookkeeping included), so it is PID 1 of the new PID namespace. The launcher
puts it in a process group of its own (the harness kills that group on a timeout), tells its
pid, keeps the result pipe (the process never holds it: it could tell an exit of its choice),
and when it ends (its pidfd readable) reaps it and tells how it ended. The process itself:
closes the socket first, dies with the launcher (parent-death signal, and a check on the
launcher's pidfd for a launcher that died before that was armed), its own process group (also
set from inside: nothing of the command runs before), maps its user to root in a new user
namespace, / private, a fresh /proc, the view (`sandbox_program.isolate`; a held path is bound
only while it is still the folder of the descriptor the harness opened), no capabilities;
`exec`: gated, it waits until the harness writes "g" on the gate (EOF instead: it exits,
nothing run), then execs the command; `checks`: exec `python -I -S -B -c BOOT
VERDICT_FD[:GATE_FD] CHECKS_PY SYS_PATH...` (checks_program.command), as the harness starts it
where there is no sandbox, at once: gated, the checks program waits for the go itself, its
interpreter started while the agent runs. It is a fresh interpreter, so that every checks run
draws its own string-hash seed and reads its locale and environment at its start (a checks.py
run in a fork of this process would share one seed with every run of the invocation, and
`verify`'s "same state twice" could not catch checks that depend on a set's order).
The command's process group is not the launcher's, and the launcher is outside its PID
namespace: nothing the command runs can name, stop or signal it (`kill(0, SIGSTOP)` stops only
the command's own group; its exit is still told).
The launcher itself stays in the harness's namespaces and never runs a request's code. It reads
nothing the agent wrote. When the harness goes away (even by SIGKILL) the socket reads EOF and
the launcher exits; every sandboxed process dies with it (parent-death signal), and with each
its whole PID namespace.
"""

import ctypes
import enum
import json
import os
import select
import signal
import socket

from ci_eval.run.checks import checks_program
from ci_eval.run.sandbox import sandbox_program

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
SYS_CLONE3 = 435  # the same number on every architecture (Linux >= 5.3)
SYS_CLONE = {"x86_64": 56, "aarch64": 220, "riscv64": 220, "ppc64le": 120}  # where clone3 is
ENOSYS = 38  # refused (docker's default seccomp profile): clone, whose flags come first there
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_FDS = 6
DEATH_EXIT = 137
GATE_CLOSED = checks_program.GATE_CLOSED  # the gate closed without a go: no checks needed

_syscall = ctypes.PyDLL(None, use_errno=True).syscall  # PyDLL: the GIL stays held, as os.fork
_syscall.restype = ctypes.c_long


class _CloneArgs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack", "stack_size", "tls")]


def fork_into(flags: int) -> int:
    """os.fork(), the child made in the new namespaces of `flags` (CLONE_NEW*): clone(2) where
    os.fork calls fork(), between the same hooks of the interpreter (its locks, at-fork
    handlers, the child's thread state). Only from a process with one thread. glibc's cached
    thread id stays the parent's in the child (its fork() updates it): there it only tags the
    owner of a lock, the same tag throughout, and the child calls neither pthread_kill nor
    raise(3) before it execs or exits."""
    ctypes.pythonapi.PyOS_BeforeFork()
    args = _CloneArgs(flags=flags, exit_signal=signal.SIGCHLD)
    pid = _syscall(SYS_CLONE3, ctypes.byref(args), ctypes.sizeof(args))
    machine = os.uname().machine
    if pid < 0 and ctypes.get_errno() == ENOSYS and machine in SYS_CLONE:
        pid = _syscall(SYS_CLONE[machine], flags | signal.SIGCHLD, 0, 0, 0, 0)
    error = ctypes.get_errno()
    if pid == 0:
        ctypes.pythonapi.PyOS_AfterFork_Child()
        return 0
    ctypes.pythonapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(error, f"clone: {os.strerror(error)}")
    return pid


def serve(sock_fd: int) -> None:
    sock = socket.socket(fileno=sock_fd)
    own = os.pidfd_open(os.getpid())  # the children's check that the launcher lives
    ids = (os.getuid(), os.getgid())
    running: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, result fd)
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            if fd != sock.fileno():
                _ended(*running.pop(fd), fd, poller)
            elif not _request(sock, own, ids, running, poller):
                os._exit(0)  # the harness is gone; every sandboxed process dies with this one


def _request(sock: socket.socket, own: int, ids, running: dict, poller) -> bool:
    """Start one request; False when the harness closed the socket."""
    try:
        message, fds, flags, _ = socket.recv_fds(sock, MAX_REQUEST_BYTES, MAX_FDS)
    except InterruptedError:
        return True
    except OSError:
        message, fds, flags = b"", [], 0
    if not message:
        return False
    try:
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(fds) < 3:
            raise ValueError("request cut short")
        request = json.loads(message)
        namespaces = CLONE_NEWNS | CLONE_NEWPID
        namespaces |= CLONE_NEWUSER if request.get("user") else 0
        namespaces |= CLONE_NEWNET if request.get("net") else 0
        pid = fork_into(namespaces)
    except Exception as exc:  # noqa: BLE001 - a bad request, or no fork: that run's failure
        if fds:
            tell(fds[0], ResultKind.ERROR, f"{type(exc).__name__}: {exc}")
        pid = -1
    if pid == 0:
        _sandboxed(request, fds, sock, own, ids)  # never returns
    result = fds.pop(0) if pid > 0 else None
    for received in fds:
        os.close(received)
    if result is None:
        return True
    try:
        os.setpgid(pid, pid)  # before its pid is told: the harness may kill the group at once
    except OSError:
        pass  # it has set it itself already, or ended
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as exc:  # no descriptor left to follow it by: it must not run unfollowed
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        tell(result, ResultKind.ERROR, f"cannot follow the sandboxed process: {exc}")
        os.close(result)
        return True
    tell(result, ResultKind.PID, pid)
    running[pidfd] = (pid, result)
    poller.register(pidfd, select.POLLIN)
    return True


def _ended(pid: int, result: int, pidfd: int, poller) -> None:
    """A sandboxed process ended: reaped (its CPU time counts as the launcher's children's:
    the benchmarks read it) and its exit told."""
    poller.unregister(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    tell(result, ResultKind.EXIT, os.waitstatus_to_exitcode(status))
    os.close(result)


class ResultKind(enum.Enum):
    PID = "pid"  # value: the command's pid (and process group)
    EXIT = "exit"  # value: its exit code, negative for a signal
    ERROR = "error"  # value: why the launcher could not start it


def tell(fd: int, kind: ResultKind, value: int | str) -> None:
    """One message on the result pipe: a JSON object on one line."""
    if isinstance(value, str):
        value = value[:2000]
    try:
        os.write(fd, json.dumps({"kind": kind.value, "value": value}).encode(errors="replace")
                 + b"\n")
    except OSError:
        pass


def read_result(line: str) -> tuple[ResultKind, int | str] | None:
    """A message `tell` wrote (a pid and an exit code are ints, an error text); None for
    anything else."""
    try:
        frame = json.loads(line)
        kind, value = ResultKind(frame["kind"]), frame["value"]
    except (ValueError, KeyError, TypeError):
        return None
    expected = str if kind is ResultKind.ERROR else int
    if type(value) is not expected:
        return None
    return kind, value


def _sandboxed(request: dict, fds: list[int], sock: socket.socket, launcher: int, ids) -> None:
    """The forked process, PID 1 of its namespaces: builds the view and execs the command;
    never returns into the launcher's loop."""
    _, output, status_fd, *rest = fds  # the result pipe is the launcher's alone
    try:
        sock.close()  # first: nothing below may ever talk to the launcher
        sandbox_program.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # unshare --kill-child
        if select.select([launcher], [], [], 0)[0]:  # the launcher ended before that was armed
            os._exit(DEATH_EXIT)
        os.setpgid(0, 0)  # the harness kills this group on a timeout (the launcher sets it too)
        verdict_fd = rest.pop(0) if request.get("mode") == "checks" else None
        gate_fd = rest.pop(0) if request.get("gated") else None
        held = dict(zip(request.get("held", ()), rest, strict=True))
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        inherited = [fd for fd in (verdict_fd, gate_fd) if fd is not None] + list(held.values())
        _close_all_but([0, 1, 2, status_fd, *inherited])  # the launcher's other runs' pipes too
        if request.get("user"):
            _map_root(*ids)
        sandbox_program.mount(None, "/", None, MS_REC | MS_PRIVATE)
        sandbox_program.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        if request.get("net") and request.get("loopback"):
            sandbox_program.loopback_up()  # while this process still has CAP_NET_ADMIN in the netns
        if not held:  # else the cwd is entered in the view only, where it is the held folder
            os.chdir(request["cwd"])
        view = sandbox_program.View.from_json(request["sandbox"])
        env = {**request["env"], **sandbox_program.isolate(view, held, cwd=request["cwd"])}
    except BaseException as exc:  # noqa: BLE001 - it must never return into the loop
        try:
            sandbox_program.report(status_fd, _describe(exc))
        finally:
            os._exit(sandbox_program.SANDBOX_FAILED)
    argv = request["argv"]
    if request["mode"] == "checks":
        argv = checks_program.command(verdict_fd, request["checks"], request["sys_path"], gate_fd)
        for fd in (verdict_fd, gate_fd):  # checks_program takes them off again first thing
            if fd is not None:
                os.set_inheritable(fd, True)
    elif gate_fd is not None and not checks_program.wait_for_gate(gate_fd):
        os._exit(GATE_CLOSED)
    try:
        for name in ("SIGPIPE", "SIGXFSZ", "SIGINT"):  # as a fresh exec from a shell has them
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        os.set_inheritable(status_fd, False)  # closed by the exec: never the command's
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        sandbox_program.report(status_fd, f"command not found: {argv[0]}",
                        sandbox_program.FailureKind.COMMAND_NOT_FOUND)
        os._exit(sandbox_program.COMMAND_NOT_FOUND)
    except BaseException as exc:  # noqa: BLE001
        sandbox_program.report(status_fd, f"cannot run {argv[0]}: {getattr(exc, 'strerror', exc)}")
        os._exit(sandbox_program.SANDBOX_FAILED)
    os._exit(sandbox_program.SANDBOX_FAILED)


def _map_root(uid: int, gid: int) -> None:
    """In the new user namespace: be root there, mapped to the harness's own user (unshare
    --map-root-user)."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                       ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)


def _close_all_but(keep: list[int]) -> None:
    previous = -1
    for fd in sorted(set(keep)):
        if fd > previous + 1:
            os.closerange(previous + 1, fd)
        previous = fd
    os.closerange(previous + 1, os.sysconf("SC_OPEN_MAX"))


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
