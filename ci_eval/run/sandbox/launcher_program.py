"""The sandbox launcher: one interpreter per harness process that forks every sandboxed command.

Started by ci_eval/run/sandbox/launcher.py through launcher_boot_program.py (`python -I -S -c
TEXT SOCKET_FD CONFIG`, CONFIG: where ci_eval is). It takes requests on the socket, one at a time:

  request  {"mode": "exec" | "checks", "argv", "env", "cwd", "sandbox": sandbox_program.View as JSON,
           "user": bool, "net": bool, "sys_path", "checks", "gated": bool, "held": [paths]},
           with the file descriptors [result, output, status] (+ [verdict] for checks, + [gate]
           when gated, + one per held path) passed alongside (SCM_RIGHTS)
  result   one JSON object per line on the result pipe, {"kind": ResultKind, "value"} (`tell`,
           read back by `read_result`), written by the forked child: pid N once it exists (its
           process group is the command's), exit N when the command ended (the exit code as
           subprocess reports it: negative for a signal); error MESSAGE from the launcher
           when it could not fork. No exit (EOF): the child was killed.

Per request, what `setpriv --pdeathsig KILL unshare --mount --pid --fork --kill-child
--mount-proc --propagation private [--user --map-root-user] [--net] python -I -S sandbox_program.py ...`
did, without starting a program or an interpreter:
  child       its own process group, dies with the launcher (parent-death signal), unshares
              the namespaces and forks the grandchild, waits for it, writes how it ended and
              exits (tearing the namespaces down after the harness has its answer)
  grandchild  PID 1 of the new PID namespace, in a session of its own (nothing it runs can
              signal the child through a shared process group), dies with the child; / private, a fresh /proc, the
              view (`sandbox_program.isolate`; a held path is bound only while it is still the
              folder of the descriptor the harness opened), no capabilities; `exec`: gated, it
              waits until the harness writes "g" on the gate (EOF instead: it exits, nothing
              run), then execs the command; `checks`: exec `python -I -S -B checks_program.py
              VERDICT_FD[:GATE_FD] CHECKS_PY SYS_PATH...` (checks_program.command), as the
              harness starts it where there is no sandbox, at once: gated, the checks program
              waits for the go itself, its interpreter started while the agent runs. It is a
              fresh interpreter, so that every checks run draws its own string-hash seed and
              reads its locale and environment at its start (a checks.py run in a fork of this
              process would share one seed with every run of the invocation, and `verify`'s
              "same state twice" could not catch checks that depend on a set's order). It
              never holds the result pipe.
The launcher itself stays in the harness's namespaces and never runs a request's code. It reads
nothing the agent wrote. Its socket is closed first thing in every child, so nothing sandboxed
can send it a request. When the harness goes away (even by SIGKILL) the socket reads EOF and the
launcher exits; every child dies with it (parent-death signal), every grandchild with its child.
"""

import ctypes
import enum
import json
import os
import signal
import socket

from ci_eval.run.checks import checks_program
from ci_eval.run.sandbox import sandbox_program

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_FDS = 6
DEATH_EXIT = 137
GATE_CLOSED = checks_program.GATE_CLOSED  # the gate closed without a go: no checks needed


def serve(sock_fd: int) -> None:
    signal.signal(signal.SIGCHLD, _reap)
    sock = socket.socket(fileno=sock_fd)
    own = os.getpid()
    ids = (os.getuid(), os.getgid())
    while True:
        try:
            message, fds, flags, _ = socket.recv_fds(sock, MAX_REQUEST_BYTES, MAX_FDS)
        except InterruptedError:
            continue
        except OSError:
            message, fds, flags = b"", [], 0
        if not message:  # the harness is gone; every child dies with this process
            os._exit(0)
        try:
            if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(fds) < 3:
                raise ValueError("request cut short")
            request = json.loads(message)
            pid = os.fork()
        except Exception as exc:  # noqa: BLE001 - a bad request, or no fork: that run's failure
            if fds:
                tell(fds[0], ResultKind.ERROR, f"{type(exc).__name__}: {exc}")
            pid = -1
        if pid == 0:
            _child(request, fds, sock, own, ids)  # never returns
        for received in fds:
            os.close(received)


def _reap(_signal, _frame) -> None:
    """Reap every child that ended (waited for, so that their CPU time counts as the
    launcher's children's: the benchmarks read it)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


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


def _child(request: dict, fds: list[int], sock: socket.socket, launcher: int, ids) -> None:
    """The forked child: tells its pid, makes the namespaces, forks the command's process, waits
    for it and tells how it ended; never returns into the launcher's loop."""
    result, output, status_fd, *rest = fds
    try:
        verdict_fd = rest.pop(0) if request.get("mode") == "checks" else None
        gate_fd = rest.pop(0) if request.get("gated") else None
        held = dict(zip(request.get("held", ()), rest, strict=True))
        sock.close()  # first: nothing below may ever talk to the launcher
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sandbox_program.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != launcher:
            os._exit(DEATH_EXIT)
        os.setpgid(0, 0)  # the harness kills this group on a timeout
        tell(result, ResultKind.PID, os.getpid())
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        inherited = [fd for fd in (verdict_fd, gate_fd) if fd is not None] + list(held.values())
        keep = [result, status_fd, *inherited]
        _close_all_but([0, 1, 2, *keep])
        flags = CLONE_NEWNS | CLONE_NEWPID
        flags |= CLONE_NEWUSER if request.get("user") else 0
        flags |= CLONE_NEWNET if request.get("net") else 0
        if sandbox_program.libc.unshare(flags) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"unshare: {os.strerror(errno)}")
        if request.get("user"):
            _map_root(*ids)
        pid = os.fork()
        if pid == 0:
            os.close(result)  # never the command's: it could tell an exit of its choice
            _grandchild(request, status_fd, verdict_fd, gate_fd, held)  # never returns
        # Only the command holds its pipes now: their ends come with its end, not with this
        # process's, whose exit (tearing the namespaces down) is off the harness's path.
        for fd in (status_fd, *inherited):
            os.close(fd)
        os.dup2(0, 1)
        os.dup2(0, 2)
        _, status = os.waitpid(pid, 0)
        tell(result, ResultKind.EXIT, os.waitstatus_to_exitcode(status))
        os._exit(0)
    except BaseException as exc:  # noqa: BLE001 - a child must never return into the loop
        try:
            sandbox_program.report(status_fd, _describe(exc))
            tell(result, ResultKind.EXIT, sandbox_program.SANDBOX_FAILED)
        finally:
            os._exit(sandbox_program.SANDBOX_FAILED)


def _grandchild(request: dict, status_fd: int, verdict_fd: int | None, gate_fd: int | None,
                held: dict[str, int]) -> None:
    """PID 1 of the new namespaces."""
    try:
        # A session (and process group) of its own: in the child's group, kill(0, SIGSTOP) by
        # the agent would stop the child, which sits outside the PID namespace and reports how
        # the command ended. The harness kills the child's group; this process dies with it.
        os.setsid()
        sandbox_program.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # unshare --kill-child
        sandbox_program.mount(None, "/", None, MS_REC | MS_PRIVATE)
        sandbox_program.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        if request.get("net") and request.get("loopback"):
            sandbox_program.loopback_up()  # while this process still has CAP_NET_ADMIN in the netns
        if not held:  # else the cwd is entered in the view only, where it is the held folder
            os.chdir(request["cwd"])
        view = sandbox_program.View.from_json(request["sandbox"])
        env = {**request["env"], **sandbox_program.isolate(view, held, cwd=request["cwd"])}
    except BaseException as exc:  # noqa: BLE001
        sandbox_program.report(status_fd, _describe(exc))
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
