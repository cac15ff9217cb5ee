"""Runs inside a fresh mount + PID namespace: fences the filesystem, drops privileges, execs the agent.

Usage: python -I -S path/to/sandbox_program.py [OPTION PATH]... -- COMMAND...

  --private PATH   PATH (/tmp) stays readable and writable, but writes go to an overlay whose
                   upper layer is discarded with the run; where overlayfs refuses, PATH is an
                   empty tmpfs instead
  --tmpfs PATH     an empty, writable tmpfs at PATH (/var/tmp)
  --home PATH      the same for the agent's HOME (home: host); inside a --private PATH (HOME=/tmp)
                   that path's overlay does it; where overlayfs refuses, HOME is set to a fresh
                   folder SCRATCH/home instead (the real one stays readable)
  --scratch DIR    a folder inside a --writable path, for the overlays' upper layers
  --hide PATH      an empty read-only tmpfs over PATH (the repo root, results folders)
  --keep PATH      PATH (folder or file) bound back read-only where a cover hid it
  --writable PATH  PATH bound back writable, at the same path (the run folder)
  --mask PATH      an empty read-only tmpfs over PATH after the binds (a task's solution/ inside
                   a task folder that was bound back)
  --status-fd N    an inherited pipe: a failure of the sandbox itself is written there (one
                   JSON object {"kind", "message"}, see `report` / `read_failure`); it is closed
                   on exec, so the command run inside can never write to it

In order: the overlays; then every mount becomes read-only (recursively, so the interpreter and
everything else the checks use later cannot be tampered with); a private /dev/shm (and for real
root a /dev with only harmless devices); the tmpfs mounts; the covers; the paths bound back; the
masks. Then the capability bounding set and the process's own capabilities are emptied and
no_new_privs set, so the agent (even as root) cannot remount or unmount anything to look
underneath or to write past the fence.

The same functions run inside the sandbox launcher (launcher_program.py), which forks each sandboxed
command instead of starting this script: `isolate` builds a `View` in both. The harness builds the
View (views.py) and sends it to the launcher as JSON (View.to_json / View.from_json); the
options above are the same View for this program run by hand (View.from_argv).

Why a status pipe and not an exit code: the command's own exit code and output are the agent's,
and an agent that exits 125 printing "ci-eval sandbox: ..." must not pass for a sandbox failure.
"""

import ctypes
import enum
import errno
import fcntl
import json
import os
import socket
import struct
import sys
from typing import NamedTuple

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MNT_DETACH = 2
KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": 1024,
              "nodiratime": 2048, "relatime": 1 << 21, "strictatime": 1 << 24}
SYS_MOUNT_SETATTR = 442  # the same number on every architecture (Linux >= 5.12)
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
SANDBOX_FAILED = 125  # like env(1)/unshare: the wrapper itself failed
COMMAND_NOT_FOUND = 127
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}
USE_MOUNT_SETATTR = True  # tests turn it off to exercise the fallback of older kernels

libc = ctypes.CDLL(None, use_errno=True)


def mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    result = libc.mount(
        source.encode() if source else None, target.encode(),
        fstype.encode() if fstype else None, flags, data.encode() if data else None,
    )
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _mountinfo() -> list[tuple[str, set[str]]]:
    """(mount point, per-mount options) of every mount, parents before children."""
    mounts = []
    with open("/proc/self/mountinfo", "rb") as handle:
        for line in handle:
            fields = line.split()
            point = fields[4].decode(errors="surrogateescape")
            for code in ("\\040", "\\011", "\\012", "\\134"):  # mountinfo escapes these
                point = point.replace(code, chr(int(code[1:], 8)))
            mounts.append((point, set(fields[5].decode().split(","))))
    return mounts


def _kept_flags(options: set[str]) -> int:
    """A remount must repeat the flags a mount has: in a user namespace they are locked."""
    flags = 0
    for name in options:
        flags |= KEPT_FLAGS.get(name, 0)
    return flags


def _set_readonly(path: str, readonly: bool) -> None:
    """One mount (the one at `path`) read-only or writable."""
    if USE_MOUNT_SETATTR and _setattr(path, readonly, 0):
        return
    options = next((opts for point, opts in reversed(_mountinfo()) if point == path), set())
    mount(None, path, None, MS_REMOUNT | MS_BIND | _kept_flags(options)
           | (MS_RDONLY if readonly else 0))


def _setattr(path: str, readonly: bool, flags: int) -> bool:
    """mount_setattr(2); False where the kernel lacks it (then mount(2) per mount)."""
    attr = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY if readonly else 0,
                                 0 if readonly else MOUNT_ATTR_RDONLY, 0, 0)
    if libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), flags, attr,
                     ctypes.sizeof(attr)) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (38, 22, 1):  # ENOSYS, EINVAL, EPERM
        return False
    raise OSError(errno, f"read-only {path}: {os.strerror(errno)}")


def _under(path: str, others) -> bool:
    return any(path == other or path.startswith(other.rstrip("/") + "/") for other in others)


def _readonly_everything(covered: list[str]) -> None:
    """Every mount read-only: one call where the kernel can (atomic, all or nothing), else one
    remount per mount. A mount that refuses is fatal unless a cover will hide it anyway."""
    if USE_MOUNT_SETATTR and _setattr("/", True, AT_RECURSIVE):
        return
    for point, options in _mountinfo():
        if "ro" in options:
            continue
        try:
            mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _kept_flags(options))
        except OSError as exc:
            if not _under(point, covered):
                raise OSError(exc.errno, f"cannot make {point} read-only: "
                              f"{os.strerror(exc.errno)}") from None


def _overlay(target: str, scratch: str, index: int) -> str | None:
    """A writable view of target whose writes land in scratch (discarded with the run): the upper
    layer on the run folder's disk, or in memory where the disk is refused (an upper layer inside
    the lower one, a disk overlayfs cannot use). Returns the mount point, None when refused."""
    if not os.path.isdir(target) or any(c in target + scratch for c in ",:\\"):
        return None
    if not _under(scratch, [target]):  # overlayfs refuses an upper layer inside the lower one
        base = os.path.join(scratch, f"{index}-disk")
        upper, work = os.path.join(base, "upper"), os.path.join(base, "work")
        os.makedirs(upper, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        if _mount_overlay(target, target, upper, work):
            return target
    return target if _overlay_in_memory(target) else None


def _overlay_in_memory(target: str) -> bool:
    """The upper layer in a tmpfs mounted over target itself, under the overlay: no folder to
    make on the run folder's disk (each a new inode of a busy file system, and one more for the
    cleanup to remove), and the upper layer is nowhere the command can see it. The lower layer
    is target as it was, reached through a descriptor opened before the tmpfs covered it."""
    lower = os.open(target, os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
    try:
        try:
            mount("ci-eval-upper", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700")
        except OSError:
            return False
        upper, work = os.path.join(target, "upper"), os.path.join(target, "work")
        os.mkdir(upper)
        os.mkdir(work)
        if _mount_overlay(target, f"/proc/self/fd/{lower}", upper, work):
            return True
        libc.umount2(target.encode(), MNT_DETACH)  # target as it was: the caller falls back
        return False
    finally:
        os.close(lower)


def _mount_overlay(target: str, lower: str, upper: str, work: str) -> bool:
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    for extra in ("", ",userxattr"):  # userxattr: needed inside a user namespace
        try:
            mount("ci-eval-overlay", target, "overlay", MS_NOSUID | MS_NODEV, options + extra)
            return True
        except OSError:
            pass
    return False


def _in_user_namespace() -> bool:
    with open("/proc/self/uid_map") as handle:
        return handle.read().split() != ["0", "0", "4294967295"]


def _private_dev() -> None:
    """Real root without capabilities can still open a disk or a host terminal (device nodes
    are not files of their read-only mount): give it a /dev with only harmless devices, its own
    /dev/pts, and an empty /dev/shm. Mapped root in a user namespace cannot open the host's
    devices anyway: it only gets the empty /dev/shm."""
    if _in_user_namespace():
        mount("ci-eval-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
        return
    devices = {name: os.stat(f"/dev/{name}") for name in DEVICES if os.path.exists(f"/dev/{name}")}
    mount("ci-eval-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name, info in devices.items():
        os.mknod(f"/dev/{name}", info.st_mode, info.st_rdev)
        os.chmod(f"/dev/{name}", info.st_mode & 0o7777)  # mknod obeys the umask
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/pts")
    mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    os.mkdir("/dev/shm")
    mount("ci-eval-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    _set_readonly("/dev", True)


class _Cover:
    """Empty read-only tmpfs over the folders to hide. A folder that paths are bound back into
    gets a tmpfs of its own, left writable for their mount points until seal(); every other one
    gets one shared tmpfs, read-only from the start and bound over each (a bind copies the
    read-only flag): a fraction of a tmpfs each when a temp folder holds dozens of other
    invocations' folders."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.own: list[str] = []

    def over(self, path: str, own: bool = False) -> None:
        try:
            if own or self.fd is None:
                mount("ci-eval-hidden", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
                if own:
                    self.own.append(path)
                    return
                _set_readonly(path, True)
                self.fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            else:
                mount(f"/proc/self/fd/{self.fd}", path, None, MS_BIND)
        except FileNotFoundError:
            pass  # another invocation's temp folder, gone since it was listed

    def seal(self) -> None:
        for path in self.own:
            _set_readonly(path, True)
        if self.fd is not None:
            os.close(self.fd)


def _open_path(path: str, held: int | None) -> int:
    """An O_PATH descriptor of path; with `held`, only if path is still that folder."""
    if held is None:
        return os.open(path, os.O_PATH | os.O_CLOEXEC)
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_DIRECTORY)
    now, then = os.fstat(fd), os.fstat(held)
    os.close(held)
    if (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino):
        os.close(fd)
        raise OSError(errno.ESTALE, f"{path} was replaced while the sandbox was built")
    return fd


def _bind(fd: int, path: str, writable: bool) -> None:
    if os.path.isdir(f"/proc/self/fd/{fd}"):
        os.makedirs(path, exist_ok=True)
    elif not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()
    mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | (0 if writable else MS_REC))
    os.close(fd)
    if writable:  # a bind copies the source mount's flags, read-only by now
        _set_readonly(path, False)


class View(NamedTuple):
    """What a sandbox shows (the options of this program, see the module's docstring). A
    NamedTuple, not a dataclass: `dataclasses` (inspect, ast) was a quarter of the sandbox
    launcher's start, which every `run` pays twice."""

    private: tuple[str, ...] = ()
    tmpfs: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    mask: tuple[str, ...] = ()
    home: str | None = None
    scratch: str | None = None

    def to_json(self) -> dict:
        return self._asdict()

    @classmethod
    def from_json(cls, data: dict) -> "View":
        """The View to_json gave (the launcher's request); TypeError/ValueError on anything else."""
        if not isinstance(data, dict) or set(data) != set(cls._fields):
            shown = sorted(data) if isinstance(data, dict) else data
            raise ValueError(f"not a sandbox view: {shown!r}")
        values = {}
        for name, value in data.items():
            if name in ("home", "scratch"):
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"sandbox view: {name} is not a path")
                values[name] = value
            elif isinstance(value, list) and all(isinstance(path, str) for path in value):
                values[name] = tuple(value)
            else:
                raise ValueError(f"sandbox view: {name} is not a list of paths")
        return cls(**values)

    @classmethod
    def from_argv(cls, argv: list[str]) -> "tuple[View, int | None, list[str]]":
        """(the view, --status-fd, the command after --) of this program's command line."""
        lists = {name: [] for name in ("private", "tmpfs", "hide", "keep", "writable", "mask")}
        single: dict = {"home": None, "scratch": None, "status-fd": None}
        while argv and argv[0] != "--":
            flag, value, argv = argv[0], argv[1], argv[2:]
            name = flag.removeprefix("--")
            if name in lists:
                lists[name].append(value)
            elif name in single:
                single[name] = value
            else:
                raise SystemExit(f"ci-eval sandbox: unknown option {flag}")
        status_fd = single.pop("status-fd")
        view = cls(**{name: tuple(paths) for name, paths in lists.items()}, **single)
        return view, None if status_fd is None else int(status_fd), argv[1:]


def isolate(view: View, held: dict[str, int] | None = None, cwd: str | None = None) -> dict:
    """Build the view; returns environment changes for the agent (HOME, when it moved). A
    writable path in `held` must still be the folder of that descriptor (opened by the
    harness before the agent could swap the path for a link; a mount cannot be bound from
    another mount namespace's descriptor, so it is compared, not bound); `cwd`: where to be in
    the view (default: the current folder)."""
    cwd = cwd or os.getcwd()
    private, tmpfs, hide = list(view.private), list(view.tmpfs), list(view.hide)
    binds = [(path, os.open(path, os.O_PATH | os.O_CLOEXEC), False) for path in view.keep]
    binds += [(path, _open_path(path, (held or {}).get(path)), True) for path in view.writable]
    env = {}
    home, scratch = view.home, view.scratch
    overlays = []
    if home and scratch:  # first: its upper layer may be on a disk path a private path covers
        if home != "/" and not _under(home, private + tmpfs + hide):
            overlays.append(_overlay(home, scratch, 0))
        if not overlays or overlays[0] is None:  # made now: later the path may lead elsewhere
            os.makedirs(os.path.join(scratch, "home"), exist_ok=True)
    # those holding the scratch folder last: after them, its path leads into their overlay
    for index, path in enumerate(sorted(private, key=lambda p: _under(scratch or "", [p])), 1):
        overlays.append(_overlay(path, scratch, index) if scratch else None)
    # A HOME inside /tmp (HOME=/tmp in CI containers) is writable through /tmp's overlay;
    # elsewhere without an overlay of its own it gets the fresh folder.
    if home and scratch and (home == "/" or not _under(home, [p for p in overlays if p])):
        env["HOME"] = os.path.join(scratch, "home")
    _readonly_everything(private + tmpfs + hide + ["/dev"])
    for path in overlays:
        if path:
            _set_readonly(path, False)
    _private_dev()
    for path in sorted([p for p in private if p not in overlays] + tmpfs, key=len):
        if os.path.isdir(path):
            mount("ci-eval-tmp", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    cover = _Cover()
    inside = [path for path, _, _ in binds]  # mount points to make under a cover
    for path in sorted(hide, key=len):
        if os.path.isdir(path):
            cover.over(path, own=any(_under(bound, [path]) for bound in inside))
    for path, fd, writable in binds:
        _bind(fd, path, writable)
    for path in view.mask:
        if os.path.isdir(path):
            cover.over(path)
    cover.seal()
    try:
        os.chdir(cwd)  # the old cwd is the covered, read-only folder; the path leads to the bind
    except OSError:
        os.chdir("/")  # the cwd was hidden
    drop_privileges()
    return env


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


CAPABILITY_VERSION_3 = 0x20080522


SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    """Bring up `lo` of a new network namespace (it starts down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(probe, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def drop_privileges() -> None:
    """Empty the capability bounding set (nothing can be gained by an exec), then this
    process's own capabilities (for what runs in it without an exec: the checks in the
    launcher), and set no_new_privs (no setuid binary gives them back)."""
    cap = 0
    while libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    if libc.capset(ctypes.byref(header), ctypes.byref((_CapData * 2)())) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"capset: {os.strerror(errno)}")


class FailureKind(enum.Enum):
    SANDBOX = "sandbox"  # the view, the namespaces or the launcher: infrastructure, retried
    COMMAND_NOT_FOUND = "command-not-found"  # the command is not there: retrying will not help


class Failure(NamedTuple):
    kind: FailureKind
    message: str


def report(status_fd: int | None, message: str,
           kind: FailureKind = FailureKind.SANDBOX) -> None:
    """A failure of the sandbox itself, on the status pipe as one JSON object (and on stderr
    for people)."""
    print(f"ci-eval sandbox: {message}", file=sys.stderr)
    if status_fd is not None:
        frame = json.dumps({"kind": kind.value, "message": message[:2000]})
        try:
            os.write(status_fd, frame.encode(errors="replace") + b"\n")
        except OSError:
            pass


def read_failure(status: str, launch_error: str = "") -> Failure | None:
    """What the status pipe said (`report`'s frame), else the launcher's own error; None when
    neither said anything. Text that is not a frame is still a failure of the sandbox."""
    line = status.strip().split("\n", 1)[0]
    if line:
        try:
            frame = json.loads(line)
            return Failure(FailureKind(frame["kind"]), str(frame["message"]))
        except (ValueError, KeyError, TypeError):
            return Failure(FailureKind.SANDBOX, line[:2000])
    return Failure(FailureKind.SANDBOX, launch_error) if launch_error else None


def main() -> int:
    view, status_fd, command = View.from_argv(sys.argv[1:])
    if status_fd is not None:
        os.set_inheritable(status_fd, False)  # closed by the exec below: never the agent's
    try:
        os.environ.update(isolate(view))
    except OSError as exc:
        report(status_fd, str(exc))
        return SANDBOX_FAILED
    if not command:
        return 0
    try:
        os.execvp(command[0], command)
    except FileNotFoundError:
        report(status_fd, f"command not found: {command[0]}", FailureKind.COMMAND_NOT_FOUND)
        return COMMAND_NOT_FOUND
    except OSError as exc:
        report(status_fd, f"cannot run {command[0]}: {exc.strerror}")
        return SANDBOX_FAILED


if __name__ == "__main__":
    sys.exit(main())
