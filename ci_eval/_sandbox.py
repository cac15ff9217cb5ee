"""Runs inside a fresh mount + PID namespace: hides paths, drops privileges, execs the agent.

Usage: python -I -S path/to/_sandbox.py [--hide PATH]... [--keep PATH]... -- COMMAND...
Each --hide path gets an empty tmpfs over it; each --keep path (which may lie under a hidden one)
is bound back in place. The capability bounding set is then emptied and no_new_privs set, so the
agent (even as root) cannot unmount the covers to look underneath.
"""

import ctypes
import os
import sys

MS_BIND = 4096
MS_REC = 16384
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
SANDBOX_FAILED = 125  # like env(1)/unshare: the wrapper itself failed
COMMAND_NOT_FOUND = 127

_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    result = _libc.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
        data.encode() if data else None,
    )
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _parse(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    hide, keep = [], []
    while argv and argv[0] != "--":
        flag, value, argv = argv[0], argv[1], argv[2:]
        (hide if flag == "--hide" else keep).append(value)
    return hide, keep, argv[1:]


def isolate(hide: list[str], keep: list[str]) -> None:
    kept = [(path, os.open(path, os.O_RDONLY | os.O_DIRECTORY)) for path in keep]
    for path in sorted(hide, key=len):
        if os.path.isdir(path):
            _mount("ci-eval-hidden", path, "tmpfs", 0, "mode=0755,size=1m")
    for path, fd in kept:
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC, None)
        os.close(fd)
    cap = 0
    while _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def main() -> int:
    hide, keep, command = _parse(sys.argv[1:])
    try:
        isolate(hide, keep)
    except OSError as exc:
        print(f"ci-eval sandbox: {exc}", file=sys.stderr)
        return SANDBOX_FAILED
    if not command:
        return 0
    try:
        os.execvp(command[0], command)
    except FileNotFoundError:
        print(f"ci-eval sandbox: command not found: {command[0]}", file=sys.stderr)
        return COMMAND_NOT_FOUND
    except OSError as exc:
        print(f"ci-eval sandbox: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return SANDBOX_FAILED


if __name__ == "__main__":
    sys.exit(main())
