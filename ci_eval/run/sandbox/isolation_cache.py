"""isolation.detect()'s full answer kept across processes: both sandboxes worked here.

The probe launches the real sandbox twice (and, for `verify`, the agents' launcher that nothing
else there starts): 25-60 ms of CPU at every `run`, `verify`, `grade` and `generate` start. What
is kept is only the answer that lets runs be sandboxed, under a key of everything the probe's
answer depends on that can change without the code changing (this boot, the user, the kernel,
its namespace sysctls, this process's namespaces, capabilities, seccomp and LSM label, the
interpreter, the temp folder, ci-eval's version and the sandbox's own source). A degraded answer
(either sandbox failed) is never kept: it is probed again at every start, so a machine that
gains namespaces is seen at once, and a forged or stale file can never make a run go
unsandboxed. A stale "sandboxed" (the sandbox broke after it was kept, with the key unchanged)
makes each run an infrastructure error (its launch fails), never an unsandboxed pass; removing
the file, or CI_EVAL_ISOLATION_CACHE=0, makes the next start probe again.

The file: $XDG_CACHE_HOME/ci-eval (default ~/.cache/ci-eval)/isolation-<euid>-<install>.json
(<install>: a hash of where this ci_eval and interpreter are), read only when it is a regular file
(no link followed) of this user that no one else may write.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
import time
from pathlib import Path

import ci_eval

FORMAT = 1
READ_CAP = 4096
SWITCH_ENV = "CI_EVAL_ISOLATION_CACHE"  # "0": neither read nor write the file
UNUSED_DAYS = 7  # other installs' files older than this go when an answer is written
SANDBOX_SOURCES = Path(__file__).parent
PROC_FILES = (
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/user/max_mnt_namespaces",
    "/proc/sys/user/max_pid_namespaces",
    "/proc/sys/user/max_net_namespaces",
    "/proc/self/attr/current",
)
STATUS_FIELDS = ("NoNewPrivs", "Seccomp", "CapEff", "CapBnd", "CapPrm")
NAMESPACES = ("user", "mnt", "pid", "net")


def cache_file() -> Path | None:
    if os.environ.get(SWITCH_ENV) == "0":
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    # one file per install (this checkout's sandbox code, this interpreter): two checkouts on
    # one machine do not overwrite each other's answer at every start
    install = hashlib.sha256(f"{SANDBOX_SOURCES}\0{sys.executable}".encode()).hexdigest()[:16]
    return Path(base) / "ci-eval" / f"isolation-{os.geteuid()}-{install}.json"


def _read_small(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(READ_CAP).decode(errors="replace").strip()
    except OSError:
        return None


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for source in sorted(SANDBOX_SOURCES.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


def platform_facts() -> dict:
    """What the probe's answer depends on, besides the code of this checkout."""
    status = (_read_small("/proc/self/status") or "").splitlines()
    uname = os.uname()
    return {
        "format": FORMAT,
        "ci_eval": ci_eval.__version__,
        "sandbox_sources": _sources_digest(),
        "python": [sys.executable, sys.version],
        "kernel": [uname.release, uname.version, uname.machine],
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
        "proc": {path: _read_small(path) for path in PROC_FILES},
        "status": [line for line in status if line.split(":")[0] in STATUS_FIELDS],
        "namespaces": {name: _link(f"/proc/self/ns/{name}") for name in NAMESPACES},
        "tmp": tempfile.gettempdir(),
    }


def _link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def platform_key() -> str | None:
    """The key the answer is kept under; None when a fact cannot be read (nothing kept)."""
    try:
        facts = platform_facts()
    except OSError:
        return None
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def holds_sandboxed(path: Path, key: str) -> bool:
    """Whether `path` says both sandboxes worked under `key`: a regular file of this user that
    no one else may write (opened without following a link), holding exactly that key."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid()
                or info.st_mode & 0o022):
            return False
        kept = json.loads(os.read(fd, READ_CAP))
    except (OSError, ValueError):
        return False
    finally:
        os.close(fd)
    return isinstance(kept, dict) and kept == {"key": key, "sandboxed": True}


def keep_sandboxed(path: Path, key: str) -> None:
    """Write the answer (atomically, mode 0600); a cache that cannot be written is no error."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".isolation-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"key": key, "sandboxed": True}, handle)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return
    _drop_unused(path)


def _drop_unused(kept: Path) -> None:
    """Every start of a checkout that moves (a temp copy, a new clone) keeps a file of its own:
    those not written for UNUSED_DAYS go (one that is still used is probed and written again)."""
    cutoff = time.time() - UNUSED_DAYS * 86400
    for other in kept.parent.glob(f"isolation-{os.geteuid()}-*.json"):
        try:
            if other != kept and other.lstat().st_mtime < cutoff:
                other.unlink()
        except OSError:
            pass


def forget(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
