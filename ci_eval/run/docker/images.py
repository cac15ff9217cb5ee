"""Task images: built from the task's Dockerfile, tagged by a content hash of the build context,
built at most once per invocation (and not at all when the engine already holds the tag).

The tag is `ci-eval/<task-id>:<hash>`, the hash over every file of the context (names, modes,
contents; links by target) and the Dockerfile: the same context gives the same tag on every
machine, so a tag found in the engine (a cache restored by the action, an earlier invocation)
is the image. The build log is kept at RUNS/images/<task-id>.build.log (printed on failure),
and `ci-eval` prints where it is. A failed build or a build past the task's build timeout is
an ImageError naming the task: the commands turn it into a one-line error (exit 2), never a
failed run.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ci_eval.run.docker import engine
from ci_eval.run.docker.settings import DockerSettings
from ci_eval.run.sandbox.process import death_signal_prefix
from ci_eval.tasks.model import Task

HASH_CHARS = 16
MAX_CONTEXT_BYTES = 512 * 1024 * 1024


class ImageError(Exception):
    """An image could not be built; the message names the task and the log."""


@dataclass(frozen=True)
class Image:
    tag: str
    id: str  # the engine's image id: what a copied-out WORKDIR is cached by
    workdir: str  # the image's WORKDIR ("" when it sets none)
    user: str  # the image's USER ("" = root)
    built: bool  # False: the engine already held it
    seconds: float
    log: Path | None
    entrypoint: bool = False  # the image sets an ENTRYPOINT
    path: str = ""  # the image's PATH ("" when it sets none)


def default_log_dir() -> Path:
    """Where verify and grade keep build logs: $XDG_CACHE_HOME/ci-eval/build-logs (a run keeps
    them beside its results, OUT/logs/images)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "ci-eval" / "build-logs"


def describe(task: Task, image: Image) -> str:
    """One progress line about a task's image."""
    if image.built:
        return f"{task.id}: image {image.tag} built in {image.seconds:.1f}s (log: {image.log})"
    return f"{task.id}: image {image.tag} found in the engine (context unchanged)"


def context_hash(context: Path, dockerfile: Path) -> str:
    """sha256 over the context's files (sorted relative names, modes, contents, link targets)
    and the Dockerfile's path and bytes. Raises ImageError past MAX_CONTEXT_BYTES."""
    digest = hashlib.sha256()
    total = 0
    for folder, dirs, files in os.walk(context):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, context)
            info = os.lstat(path)
            digest.update(f"{rel}\0{info.st_mode & 0o7777:o}\0".encode())
            if os.path.islink(path):
                digest.update(b"link\0" + os.readlink(path).encode() + b"\0")
                continue
            total += info.st_size
            if total > MAX_CONTEXT_BYTES:
                raise ImageError(f"build context {context} is over "
                                 f"{MAX_CONTEXT_BYTES // (1024 * 1024)} MiB")
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"\0")
    digest.update(b"dockerfile\0" + os.path.relpath(dockerfile, context).encode() + b"\0")
    digest.update(dockerfile.read_bytes())
    return digest.hexdigest()[:HASH_CHARS]


def image_tag(task: Task, settings: DockerSettings, part: str = "") -> str:
    """`part`: a sidecar's name, for its image (ci-eval/<task-id>-<part>:<hash>)."""
    dockerfile = settings.dockerfile_path(task)
    name = f"{task.id}-{part}" if part else task.id
    return f"ci-eval/{name}:{context_hash(settings.context(task), dockerfile)}"


class ImageCache:
    """One invocation's images: each task's built once, concurrent askers wait for it."""

    def __init__(self, log_dir: Path):
        self.log_dir = Path(log_dir)
        self._lock = threading.Lock()
        self._by_tag: dict[str, threading.Lock] = {}
        self._images: dict[str, Image] = {}
        self._failures: dict[str, str] = {}

    def image(self, task: Task, settings: DockerSettings, part: str = "") -> Image:
        try:
            tag = image_tag(task, settings, part)
        except OSError as exc:
            raise ImageError(f"{task.id}: cannot read its build context ({exc})") from None
        with self._lock:
            lock = self._by_tag.setdefault(tag, threading.Lock())
        with lock:
            if tag in self._images:
                return self._images[tag]
            if tag in self._failures:
                raise ImageError(self._failures[tag])
            try:
                image = self._provide(task, settings, tag, part)
            except (ImageError, engine.EngineError) as exc:
                message = str(exc) if isinstance(exc, ImageError) else (
                    f"{task.id}: image {tag}: {exc}")
                self._failures[tag] = message
                raise ImageError(message) from None
            self._images[tag] = image
            return image

    def _provide(self, task: Task, settings: DockerSettings, tag: str, part: str) -> Image:
        started = time.monotonic()
        log = None
        config = engine.image_config(tag)
        built = config is None
        if config is None:
            log = self.log_dir / f"{task.id}{'-' + part if part else ''}.build.log"
            build(tag, settings.context(task), settings.dockerfile_path(task), log,
                  timeout=settings.build_timeout, task_id=task.id)
            config = engine.image_config(tag)
            if config is None:
                raise ImageError(f"{task.id}: the build of {tag} ended but the engine has no "
                                 f"such image (log: {log})")
        return Image(tag, config.id, config.workdir, config.user, built,
                     time.monotonic() - started, log, config.entrypoint, config.path)


def build(tag: str, context: Path, dockerfile: Path, log: Path, *, timeout: float,
          task_id: str) -> None:
    """`docker build`, its output written to `log`; ImageError naming the task on failure."""
    program = engine.docker_program()
    if program is None:
        raise ImageError(f"{task_id}: cannot build its image: the docker CLI is not on PATH")
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = [program, "build", "--tag", tag, "--file", str(dockerfile), "--label",
            f"ci-eval.task={task_id}", str(context)]
    with open(log, "wb") as out:
        out.write(f"$ {' '.join(argv[1:])}\n".encode())
        out.flush()
        proc = subprocess.Popen([*death_signal_prefix(), *argv], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise ImageError(f"{task_id}: image build timed out after {timeout:g}s "
                             f"(build_timeout_seconds; log: {log})") from None
    if code != 0:
        tail = engine.last_line(log.read_bytes()[-4096:])
        raise ImageError(f"{task_id}: image build failed (exit {code}): {tail} (log: {log})")
