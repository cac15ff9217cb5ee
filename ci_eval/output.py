"""Files of the user's and command output: the one atomic writer (never half-written), folder
checks, reading a user's file, reading a file an agent (or an artifact) could have planted, and
stdout-or-file output for commands with --output.

    data = read_capped(path, 64 * 1024)   # bytes, or None when there is no such file
    # UntrustedFile("usage.json: is a symlink (not followed)") for anything else than a
    # regular file of at most `cap` bytes: never follows a link, never blocks on a FIFO or a
    # device, never reads more than the cap

    write_atomic(path, text, field="--output")   # temp file beside it, fsync, rename
    ensure_dir(path, field="--out")               # create a folder, or UserError if it cannot be

Every problem the user can fix (a folder where a file is expected, a missing parent folder, a file
where a folder is expected, no permission) is a UserError naming the path and the field.

checks.py's file helpers (ci_eval.checks.files) read through this module in a fresh interpreter
per scored run: it imports os, stat and sys alone, and pathlib only once a writer needs it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from ci_eval.errors import UserError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

NEW_FILE_MODE = 0o644  # before the umask; an existing file keeps its mode


def _path(path: str | os.PathLike) -> Path:
    """pathlib's Path, imported where a writer first needs it (it costs a checks run more than
    the read it would serve)."""
    import pathlib

    return pathlib.Path(path)


def _parts(path: str | os.PathLike) -> list[str]:
    return [part for part in os.fspath(path).split("/") if part and part != "."]


def file_name(path: str | os.PathLike) -> str:
    """The last part of a path, as pathlib's `name` reads it ("" for none)."""
    parts = _parts(path)
    return parts[-1] if parts else ""


def shown(path: str | os.PathLike) -> str:
    """A path as pathlib prints it (no "." or empty parts, no trailing slash)."""
    body = "/".join(_parts(path))
    return ("/" + body) if os.fspath(path).startswith("/") else (body or ".")


def write_atomic(path: Path | str, text: str, *, field: str | None = "--output") -> None:
    """Replace `path` with `text` (UTF-8) atomically: a temp file in the same folder, fsync,
    os.replace. Readers see the old content or the new, never a part; on any error the temp file
    is removed and `path` is untouched. An existing file keeps its permission bits.

    UserError (naming `path` and `field`) if path is a folder, its folder does not exist, or the
    write fails with an OSError (permission denied, disk full, ...)."""
    path = _path(path)
    if path.is_dir():
        raise UserError("is a folder (expected a file path)", path=path, field=field)
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "folder does not exist"
        raise UserError(what, path=folder, field=field)
    data = mask(text).encode("utf-8")
    try:
        mode = path.stat().st_mode & 0o777 if path.exists() else None
        tmp, fd = _create_temp(path)
    except OSError as exc:
        raise UserError(f"cannot write ({exc.strerror or exc})", path=path, field=field) from None
    try:
        try:
            if mode is not None:
                os.chmod(tmp, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write ({exc.strerror or exc})", path=path, field=field) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(folder)


def ensure_dir(path: Path | str, *, field: str | None = None) -> Path:
    """Create folder `path` (and missing parents) unless it exists; return it.

    UserError naming `path` and `field` if it (or a parent) is a file, or cannot be created."""
    path = _path(path)
    if path.is_dir():
        return path
    if path.exists() or path.is_symlink():
        raise UserError("is a file (expected a folder)", path=path, field=field)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), path)
        raise UserError("is a file (expected a folder)", path=blocker, field=field) from None
    except OSError as exc:
        raise UserError(f"cannot create folder ({exc.strerror or exc})", path=path,
                        field=field) from None
    return path


def read_user_file(path: Path | str, *, field: str | None = None) -> bytes:
    """The bytes of a file of the user's repo or command line; an OSError (no permission, a
    link loop, a folder) is a UserError naming the path and field."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except IsADirectoryError:
        raise UserError("is a folder (expected a file)", path=path, field=field) from None
    except OSError as exc:
        raise UserError(f"cannot read ({exc.strerror or exc})", path=path, field=field) from None


def emit(text: str, output: str | None) -> None:
    """`text` to stdout, or atomically to the file `output` (--output FILE; "-" is stdout;
    its folder is created when missing)."""
    if output and output != "-":
        target = _path(output)
        ensure_dir(target.parent, field="--output")
        write_atomic(target, text, field="--output")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _create_temp(path: Path) -> tuple[Path, int]:
    """A new, exclusively created temp file beside `path`: (its path, an open write fd).
    Created with NEW_FILE_MODE, so the umask applies as for any new file."""
    for _ in range(100):
        # os.urandom as secrets.token_hex does: secrets (hashlib, random) would cost every checks
        # start that reads a file (ci_eval.checks.files) more than the rest of its imports
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         NEW_FILE_MODE)
        except FileExistsError:
            continue
        return tmp, fd
    raise FileExistsError(f"no free temp file name beside {path}")


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --- files an agent could have put in place -------------------------------------------------


class UntrustedFile(ValueError):
    """A file that is not a plain, small enough regular file; the message says what it is."""


def read_capped_beneath(root: Path | str, rel: str, cap: int) -> bytes | None:
    """read_capped of root/rel where no component below `root` may be a link either (a folder
    the agent's code replaced by a link to a host path): each folder opened with O_NOFOLLOW
    from the one above. None when a component is missing."""
    parts = _path(rel).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                dir_fd=fd)
            except FileNotFoundError:
                return None
            except OSError as exc:
                try:
                    linked = exc.errno == errno.ELOOP or stat.S_ISLNK(
                        os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
                except OSError:
                    linked = False
                what = ("is a symlink (not followed)" if linked
                        else "is not a folder" if exc.errno == errno.ENOTDIR
                        else f"cannot open ({exc.strerror})")
                raise UntrustedFile(f"{part}: {what}") from None
            os.close(fd)
            fd = below
        return read_capped(parts[-1], cap, dir_fd=fd)
    finally:
        os.close(fd)


def read_capped(path: Path | str, cap: int, *, dir_fd: int | None = None) -> bytes | None:
    name = file_name(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFile(f"{name}: is a symlink (not followed)") from None
        raise UntrustedFile(f"{name}: cannot open ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFile(f"{name}: is not a regular file")
        if info.st_size > cap:
            raise UntrustedFile(f"{name}: {info.st_size} bytes, more than the {cap}-byte cap")
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, min(65536, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > cap:  # it grew after the fstat
        raise UntrustedFile(f"{name}: more than the {cap}-byte cap")
    return b"".join(chunks)


# --- secrets, masked in everything ci-eval writes -----------------------------------------------
#
# One masking point: the values of the secrets this process knows (environment variables whose
# names look like secrets, registered when the CLI starts, and the secrets an agent is given,
# registered when it is run) are replaced by MASK in every string written: results records
# (every text field, the diff included), logs, files written through write_atomic and emit, the
# PR comment and PR bodies, the step summary and outputs, and stdout and stderr (progress lines,
# annotations, tables, errors: main wraps both streams). What cannot be masked: a secret the
# agent encodes (base64, hex, reversed, split over lines or strings) is no longer its value.

MASK = "***"
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
MIN_SECRET_CHARS = 6  # shorter values ("1", "true") would mask ordinary words
MIN_FRAGMENT_CHARS = 4  # a secret's start (end) cut off at the end (start) of a capped text
_secrets: set[str] = set()


def looks_secret(name: str) -> bool:
    return any(part in name.upper() for part in SECRET_NAME_PARTS)


def add_secrets(values) -> None:
    """Mask these values from now on, in everything this process writes."""
    _secrets.update(v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS)


def add_environment_secrets(environ=os.environ) -> None:
    """The values of the environment variables whose names look like secrets (*KEY*, *TOKEN*,
    *SECRET*, *PASSWORD*, *CREDENTIAL*, *AUTH*)."""
    add_secrets(value for name, value in environ.items() if looks_secret(name))


def mask(text: str, *, cut_start: bool = False, cut_end: bool = False) -> str:
    """`text` with every known secret replaced by MASK; with cut_start / cut_end (the text was
    cut there from a longer one) also a secret's tail at its start / a secret's head at its
    end, of at least MIN_FRAGMENT_CHARS characters."""
    if not _secrets or not isinstance(text, str):
        return text
    for value in sorted(_secrets, key=len, reverse=True):  # a longer secret holding a shorter
        if value in text:
            text = text.replace(value, MASK)
        if cut_end:
            text = _masked_edge(text, value, at_end=True)
        if cut_start:
            text = _masked_edge(text, value, at_end=False)
    return text


def _masked_edge(text: str, value: str, *, at_end: bool) -> str:
    for size in range(min(len(value), len(text)) - 1, MIN_FRAGMENT_CHARS - 1, -1):
        if at_end and text.endswith(value[:size]):
            return text[:-size] + MASK
        if not at_end and text.startswith(value[-size:]):
            return MASK + text[size:]
    return text


def masked(value):
    """A JSON-like value (a results record) with every string in it masked, keys included."""
    if not _secrets:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {masked(k): masked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(v) for v in value]
    return value


class MaskedStream:
    """A text stream (sys.stdout, sys.stderr) that masks what is written to it. best_effort
    (stderr: notes and progress, never results): a write or flush that fails (a full disk,
    2>/dev/full, a closed pipe) is dropped, and `failed` says so, so the command's outcome and
    exit code stay what its results say."""

    def __init__(self, stream, *, best_effort: bool = False):
        self._stream = stream
        self._best_effort = best_effort
        self.failed = False

    def write(self, text: str) -> int:
        try:
            self._stream.write(mask(text))
        except (OSError, ValueError):
            if not self._best_effort:
                raise
            self.failed = True
        return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError):
            if not self._best_effort:
                raise
            self.failed = True

    def __getattr__(self, name):
        return getattr(self._stream, name)
