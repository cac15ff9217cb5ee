"""The Docker engine's edge: the docker CLI, run with a timeout that removes the container.

The CLI is `docker` on PATH and talks to the engine DOCKER_HOST names (default
unix:///var/run/docker.sock). Nothing here reads the agent's files: contexts are the task
author's, and what a container printed comes back capped.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ci_eval.plain_tar import extract_plain_stream
from ci_eval.run.sandbox import cancellation
from ci_eval.run.sandbox.process import death_signal_prefix

OUTPUT_CAP_BYTES = 64 * 1024  # of each stream of a container kept
PROBE_TIMEOUT = 20.0


# `docker run`'s own exit codes (the engine failed, the command could not be invoked or found)
# and SIGKILL's (the memory limit): only then is the container's state asked for.
ENGINE_EXIT_CODES = (125, 126, 127, 137)
_remover = ThreadPoolExecutor(max_workers=2, thread_name_prefix="container-remover")


class EngineError(Exception):
    """The engine could not do what was asked (not the contained command failing)."""


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None: killed for the timeout
    timed_out: bool
    seconds: float
    stdout: bytes
    stderr: bytes
    engine_error: str = ""  # the engine's own record: the command could not be started
    oom_killed: bool = False

    @property
    def output_tail(self) -> str:
        return (self.stdout + self.stderr).decode(errors="replace")[-4096:]


def docker_program() -> str | None:
    return shutil.which("docker")


def docker(*args: str, timeout: float = PROBE_TIMEOUT, input: bytes | None = None,
           check: bool = True) -> subprocess.CompletedProcess:
    """One docker CLI call; EngineError (its last stderr line) when it fails and `check`."""
    program = docker_program()
    if program is None:
        raise EngineError("the docker CLI is not on PATH")
    try:
        proc = subprocess.run([program, *args], capture_output=True, timeout=timeout,
                              input=input, check=False)
    except subprocess.TimeoutExpired:
        raise EngineError(f"docker {args[0]} did not answer within {timeout:g}s") from None
    if check and proc.returncode != 0:
        raise EngineError(last_line(proc.stderr) or f"docker {args[0]} exited {proc.returncode}")
    return proc


def last_line(data: bytes) -> str:
    lines = [line.strip() for line in data.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def engine_problem() -> str | None:
    """Why no engine can be used here (None: one answers)."""
    try:
        proc = docker("version", "--format", "{{.Server.Version}}", check=False)
    except EngineError as exc:
        return str(exc)
    if proc.returncode != 0 or not proc.stdout.strip():
        return f"no Docker engine answers ({last_line(proc.stderr) or 'docker version failed'})"
    return None


def run_container(argv: list[str], name: str, timeout: float, *,
                  input: bytes | None = None) -> Finished:
    """`docker run --name NAME ...` (argv from containers.run_argv) within `timeout` seconds:
    then the container is killed. It is removed afterwards whatever happened (the client can
    be killed by Ctrl-C: cancellation kills its group, and the container with it here)."""
    program = docker_program()
    if program is None:
        raise EngineError("the docker CLI is not on PATH")
    started = time.monotonic()
    proc = subprocess.Popen([*death_signal_prefix(), program, *argv],
                            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    cancellation.register(proc.pid)
    expired = threading.Event()

    def on_timeout() -> None:
        expired.set()
        kill_container(name)

    out, err = bytearray(), bytearray()
    readers = [threading.Thread(target=_drain, args=(stream, buf), daemon=True)
               for stream, buf in ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()
    timer = threading.Timer(timeout, on_timeout)
    timer.start()
    try:
        if input is not None and proc.stdin is not None:
            try:
                proc.stdin.write(input)
                proc.stdin.close()
            except OSError:
                pass
        proc.wait()
    finally:
        timer.cancel()
        cancellation.unregister(proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        timed_out = expired.is_set()
        state: tuple[str, bool] | None = ("", False)
        if not timed_out and (proc.returncode < 0 or proc.returncode in ENGINE_EXIT_CODES):
            # ambiguous: the engine's own failure, the memory limit, or the command's own code
            state = _final_state(name)
        if proc.returncode < 0:  # the client was killed (Ctrl-C): the container may still run
            kill_container(name)
        _remover.submit(remove_container, name)  # off the critical path; waited for at exit
    if state is None:  # never created: what the client said is the engine's own refusal
        state = (f"the container was not created ({last_line(bytes(err)) or 'no reason given'})",
                 False)
    for reader in readers:
        reader.join(timeout=5)
    return Finished(None if timed_out else proc.returncode, timed_out,
                    time.monotonic() - started, bytes(out[-OUTPUT_CAP_BYTES:]),
                    bytes(err[-OUTPUT_CAP_BYTES:]), *state)


def run_in_started(start_argv: list[str], exec_argv: list[str], name: str,
                   timeout: float) -> Finished:
    """`docker run --detach` (containers.started_argvs), then the command `docker exec`'d in
    the running container within `timeout` seconds (then the container is killed); the
    container is removed afterwards whatever happened."""
    started = time.monotonic()
    try:
        proc = docker(*start_argv, check=False, timeout=max(PROBE_TIMEOUT, timeout))
    except EngineError as exc:
        remove_container(name)
        return Finished(None, False, time.monotonic() - started, b"", b"", str(exc))
    if proc.returncode != 0:
        remove_container(name)
        return Finished(proc.returncode, False, time.monotonic() - started, b"", proc.stderr,
                        f"the container was not started ({last_line(proc.stderr) or 'no reason'})")
    finished = run_container(exec_argv, name, timeout)
    return dataclasses.replace(finished, seconds=time.monotonic() - started)


def _final_state(name: str) -> tuple[str, bool] | None:
    """(State.Error, State.OOMKilled) as the engine recorded them: not text the contained code
    could print. None: no such container (it was never created)."""
    try:
        proc = docker("inspect", "--type", "container", "--format",
                      "{{.State.OOMKilled}}\n{{.State.Error}}", name, check=False, timeout=60)
    except EngineError as exc:
        return str(exc), False
    if proc.returncode != 0:
        return None
    lines = (proc.stdout.decode(errors="replace").splitlines() + ["", ""])[:2]
    return lines[1].strip(), lines[0].strip() == "true"


def _drain(stream, buf: bytearray) -> None:
    while True:
        chunk = stream.read1(65536)
        if not chunk:
            break
        buf += chunk
        if len(buf) > 2 * OUTPUT_CAP_BYTES:
            del buf[: len(buf) - OUTPUT_CAP_BYTES]


def kill_container(name: str) -> None:
    try:
        docker("kill", name, check=False, timeout=60)
    except EngineError:
        pass


def remove_container(name: str) -> None:
    try:
        docker("rm", "--force", "--volumes", name, check=False, timeout=60)
    except EngineError:
        pass


@dataclass(frozen=True)
class ImageConfig:
    id: str  # the engine's image id (sha256:...)
    workdir: str  # "" when the image sets none
    user: str  # "" when the image sets none (root)
    entrypoint: bool = False  # the image sets an ENTRYPOINT
    path: str = ""  # the image's PATH ("" when it sets none)


def image_config(tag: str) -> ImageConfig | None:
    """The image's id, WORKDIR, USER, whether it has an ENTRYPOINT, and its PATH; None when
    the engine holds no such image."""
    proc = docker("image", "inspect", "--format",
                  "{{.Id}}\n{{.Config.WorkingDir}}\n{{.Config.User}}\n{{json .Config.Entrypoint}}"
                  "\n{{json .Config.Env}}", tag, check=False)
    if proc.returncode != 0:
        if b"No such image" in proc.stderr or b"no such image" in proc.stderr.lower():
            return None
        raise EngineError(last_line(proc.stderr) or "docker image inspect failed")
    lines = [line.strip() for line in
             (proc.stdout.decode(errors="replace").splitlines() + [""] * 5)[:5]]
    return ImageConfig(lines[0], lines[1], lines[2], entrypoint=lines[3] not in ("", "null", "[]"),
                       path=_path_of(lines[4]))


def _path_of(env_json: str) -> str:
    """PATH of the image's Config.Env (a JSON list of "NAME=value"); "" when it sets none."""
    try:
        env = json.loads(env_json)
    except ValueError:
        return ""
    if not isinstance(env, list):
        return ""
    found = [item[len("PATH="):] for item in env if isinstance(item, str)
             and item.startswith("PATH=")]
    return found[-1] if found else ""


COPY_OUT_CAP_BYTES = 512 * 1024 * 1024  # of the tar stream of an image's WORKDIR
COPY_OUT_TIMEOUT = 300.0


class _CappedStream(io.RawIOBase):
    """A pipe read through, EngineError past `cap` bytes (a sparse file of the image counts at
    its full size in `docker cp`'s tar)."""

    def __init__(self, stream, cap: int, what: str):
        self.stream, self.cap, self.what, self.total = stream, cap, what, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.stream.read(len(buffer))
        self.total += len(data)
        if self.total > self.cap:
            raise EngineError(f"{self.what} holds more than {self.cap // (1024 * 1024)} MiB "
                              "(sparse files count at their full size)")
        buffer[:len(data)] = data
        return len(data)


def copy_out(tag: str, folder: str, target: Path, *, cap: int = COPY_OUT_CAP_BYTES) -> None:
    """The contents of `folder` in the image, unpacked into `target` (made here): a stopped
    container's files streamed as a tar (what plain_tar keeps), never held in memory, at most
    `cap` bytes of it (EngineError past that, or past COPY_OUT_TIMEOUT)."""
    name = f"ci-eval-copy-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
    docker("create", "--name", name, "--network", "none", tag, "true", timeout=60)
    try:
        target.mkdir(parents=True)
        target.chmod(0o755)
        with tempfile.TemporaryFile() as errors:
            proc = subprocess.Popen([engine_program(), "cp", f"{name}:{folder.rstrip('/')}/.",
                                     "-"], stdout=subprocess.PIPE, stderr=errors,
                                    stdin=subprocess.DEVNULL)
            timer = threading.Timer(COPY_OUT_TIMEOUT, proc.kill)
            timer.start()
            stream = _CappedStream(proc.stdout, cap, f"{folder} of {tag}")
            try:
                with tarfile.open(fileobj=stream, mode="r|") as archive:
                    extract_plain_stream(archive, target)
                while stream.read(65536):  # the tar's end padding
                    pass
                proc.wait(timeout=COPY_OUT_TIMEOUT)
            except (tarfile.TarError, EngineError, OSError, subprocess.TimeoutExpired) as exc:
                proc.kill()
                proc.wait()
                errors.seek(0)
                said = last_line(errors.read(65536))
                if isinstance(exc, EngineError):
                    raise
                raise EngineError(said or f"docker cp: {exc}") from None
            finally:
                timer.cancel()
                if proc.stdout is not None:
                    proc.stdout.close()
            if proc.returncode != 0:
                errors.seek(0)
                raise EngineError(last_line(errors.read(65536))
                                  or f"docker cp exited {proc.returncode}")
    finally:
        remove_container(name)


def engine_program() -> str:
    program = docker_program()
    if program is None:
        raise EngineError("the docker CLI is not on PATH")
    return program
