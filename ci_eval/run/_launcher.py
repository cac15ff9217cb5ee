"""The sandbox launcher: one interpreter per harness process that forks every sandboxed command.

Started by ci_eval/run/launcher.py as `python -I -S -c BOOT SOCKET_FD CONFIG` (CONFIG: where
ci_eval is, which modules to import up front). It serves requests on the socket, one at a time:

  request  {"id", "mode": "exec" | "checks", "argv", "env", "cwd", "sandbox": [_sandbox.py
           options], "user": bool, "net": bool, "sys_path", "checks"} with the file descriptors
           [output, status] (+ [verdict] for checks) passed alongside (SCM_RIGHTS)
  replies  {"id", "pid"} once the command's process exists, {"id", "exit"} when it ended (the
           exit code as subprocess reports it: negative for a signal)

Per request, what `setpriv --pdeathsig KILL unshare --mount --pid --fork --kill-child
--mount-proc --propagation private [--user --map-root-user] [--net] python -I -S _sandbox.py ...`
did, without starting a program or an interpreter:
  child       its own process group, dies with the launcher (parent-death signal), unshares
              the namespaces and forks the grandchild, waits for it and exits as it did
  grandchild  PID 1 of the new PID namespace, dies with the child; / private, a fresh /proc, the
              view (`_sandbox.isolate`), no capabilities; then `exec`: exec the command; `checks`:
              run checks.py right here (`_run_checks.judge`) with sys.path and the environment a
              fresh `python -I` would have, then exit
The launcher itself stays in the harness's namespaces and never runs a request's code. It reads
nothing the agent wrote. Its socket is closed first thing in every child, so nothing sandboxed
can send it a request. When the harness goes away (even by SIGKILL) the socket reads EOF: the
launcher kills every command's process group and exits; the children die with it anyway.
"""

import atexit
import ctypes
import importlib
import json
import os
import select
import signal
import socket
import sys
import threading

from ci_eval.run import _run_checks, _sandbox

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_FDS = 4
DEATH_EXIT = 137


def serve(sock_fd: int, config: dict) -> None:
    for name in config.get("preload", ()):
        importlib.import_module(name)  # imported once here, shared by every forked checks run
    sock = socket.socket(fileno=sock_fd)
    own = os.getpid()
    ids = (os.getuid(), os.getgid())
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    children: dict[int, tuple[int, int]] = {}  # pidfd (or pid without pidfds) -> (pid, id)
    pidfds = _pidfds_work()
    while True:
        events = poller.poll(None if pidfds or not children else 50)
        for fd, _ in events:
            if fd == sock.fileno():
                _take_request(sock, poller, children, pidfds, own, ids)
            elif fd in children:
                _reap(sock, poller, children, fd, pidfds)
        if not pidfds:
            for key in list(children):
                _reap(sock, poller, children, key, pidfds)


def _pidfds_work() -> bool:
    """pidfd_open(2) (Linux >= 5.3): child exits wake the loop; else it polls every 50 ms."""
    try:
        os.close(os.pidfd_open(os.getpid()))
        return True
    except (AttributeError, OSError):
        return False


def _take_request(sock, poller, children, pidfds: bool, own: int, ids) -> None:
    try:
        message, fds, flags, _ = socket.recv_fds(sock, MAX_REQUEST_BYTES, MAX_FDS)
    except OSError:
        message, fds, flags = b"", [], 0
    if not message:  # the harness is gone
        for pid, _ in children.values():
            _kill_group(pid)
        os._exit(0)
    request = {}
    try:
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            raise ValueError("request cut short")
        request = json.loads(message)
        pid = os.fork()
    except Exception as exc:  # noqa: BLE001 - a bad request, or no fork: that run's failure
        for received in fds:
            os.close(received)
        _send(sock, {"id": request.get("id"), "error": f"{type(exc).__name__}: {exc}"})
        return
    if pid == 0:
        _child(request, fds, sock, own, ids)  # never returns
    try:
        os.setpgid(pid, pid)  # also done in the child: whichever runs first
    except OSError:
        pass
    for received in fds:
        os.close(received)
    key = pid
    if pidfds:
        key = os.pidfd_open(pid)
        poller.register(key, select.POLLIN)
    children[key] = (pid, request["id"])
    _send(sock, {"id": request["id"], "pid": pid})


def _reap(sock, poller, children, key: int, pidfds: bool) -> None:
    pid, request_id = children[key]
    done, status = os.waitpid(pid, 0 if pidfds else os.WNOHANG)
    if done == 0:
        return
    del children[key]
    if pidfds:
        poller.unregister(key)
        os.close(key)
    _send(sock, {"id": request_id, "exit": os.waitstatus_to_exitcode(status)})


def _send(sock: socket.socket, reply: dict) -> None:
    try:
        sock.send(json.dumps(reply).encode())
    except OSError:
        pass  # the harness is gone: the next poll reads EOF


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _child(request: dict, fds: list[int], sock: socket.socket, launcher: int, ids) -> None:
    """The forked child: never returns into the launcher's loop."""
    status_fd = fds[1] if len(fds) > 1 else None
    try:
        sock.close()  # first: nothing below may ever talk to the launcher
        _sandbox.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != launcher:
            os._exit(DEATH_EXIT)
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        output, status_fd, *rest = fds
        verdict_fd = rest[0] if rest else None
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        keep = [fd for fd in (status_fd, verdict_fd) if fd is not None]
        _close_all_but([0, 1, 2, *keep])
        flags = CLONE_NEWNS | CLONE_NEWPID
        flags |= CLONE_NEWUSER if request.get("user") else 0
        flags |= CLONE_NEWNET if request.get("net") else 0
        if _sandbox.libc.unshare(flags) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"unshare: {os.strerror(errno)}")
        if request.get("user"):
            _map_root(*ids)
        pid = os.fork()
        if pid == 0:
            _grandchild(request, status_fd, verdict_fd)  # never returns
        for fd in keep:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):  # die the same way, as unshare(1) does
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
            os._exit(128 + os.WTERMSIG(status))
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    except BaseException as exc:  # noqa: BLE001 - a child must never return into the loop
        _sandbox.report(status_fd, _describe(exc))
        os._exit(_sandbox.SANDBOX_FAILED)
    finally:
        os._exit(_sandbox.SANDBOX_FAILED)


def _grandchild(request: dict, status_fd: int, verdict_fd: int | None) -> None:
    """PID 1 of the new namespaces."""
    try:
        _sandbox.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # unshare --kill-child
        _sandbox.mount(None, "/", None, MS_REC | MS_PRIVATE)
        _sandbox.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        os.chdir(request["cwd"])
        options, _ = _sandbox.parse(request["sandbox"])
        env = {**request["env"], **_sandbox.isolate(options)}
    except BaseException as exc:  # noqa: BLE001
        _sandbox.report(status_fd, _describe(exc))
        os._exit(_sandbox.SANDBOX_FAILED)
    if request["mode"] == "checks":
        _run_checks_here(request, env, status_fd, verdict_fd)
    argv = request["argv"]
    try:
        for name in ("SIGPIPE", "SIGXFSZ", "SIGINT"):  # as a fresh exec from a shell has them
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        os.set_inheritable(status_fd, False)  # closed by the exec: never the command's
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        _sandbox.report(status_fd, f"command not found: {argv[0]}")
        os._exit(_sandbox.COMMAND_NOT_FOUND)
    except BaseException as exc:  # noqa: BLE001
        _sandbox.report(status_fd, f"cannot run {argv[0]}: {getattr(exc, 'strerror', exc)}")
        os._exit(_sandbox.SANDBOX_FAILED)
    os._exit(_sandbox.SANDBOX_FAILED)


def _run_checks_here(request: dict, env: dict, status_fd: int, verdict_fd: int) -> None:
    """checks.py in this process, as `python -I _run_checks.py` would run it; exits."""
    os.close(status_fd)  # from here on, what goes wrong is the checks' (and the agent code's)
    code = _run_checks.CRASH_EXIT
    try:
        _set_command_line(f"ci-eval-checks {request['checks']}")
        os.environ.clear()
        os.environ.update(env)
        sys.path[:] = request["sys_path"]
        sys.dont_write_bytecode = True  # what PYTHONDONTWRITEBYTECODE asks; -I ignores it
        code = _run_checks.judge(verdict_fd, request["checks"])
        _exit_functions()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _exit_functions() -> None:
    """What an interpreter's normal exit runs: atexit handlers, non-daemon threads joined."""
    threading._shutdown()
    atexit._run_exitfuncs()


def _set_command_line(text: str) -> None:
    """What ps and /proc/PID/cmdline show for this process: a forked launcher would otherwise
    show the launcher's. Written over the launcher's own argument area (where /proc/self/stat
    says it is; the launcher leaves room), cut to fit."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])
    except (OSError, IndexError, ValueError):
        return
    if end - start < 2:
        return
    data = text.encode(errors="replace")[: end - start - 1]
    ctypes.memmove(start, data.ljust(end - start, b"\0"), end - start)


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
