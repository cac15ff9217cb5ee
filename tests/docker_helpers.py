"""A real Docker engine for the tests, and the images they build locally (no registry).

`docker_engine` (session): the engine DOCKER_HOST (or /var/run/docker.sock) names when one
answers; else, as root with dockerd installed, a dockerd of the session's own, started as
DESIGN.md says (no bridge, no iptables, data and exec roots and its unix socket in a temp
folder; a second listener in /run/ci-eval-tests-PID/, where engine sockets live on real hosts,
for the socket-hiding tests), stopped and removed after. DOCKER_HOST is set for the session,
so the CLI under test and its children find it. Without either: the tests skip, loudly
(CI_EVAL_NO_SKIPS=1 in CI turns that into a failure; .ci/run installs docker.io).

Images: BUSYBOX (FROM scratch + Debian's busybox-static, ~2 s) and PYTHON (mmdebstrap
bookworm with python3, pytest and PyYAML, ~3 min once: its rootfs tar is cached under
~/.cache/ci-eval-tests and `docker import`ed in seconds afterwards).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

BUSYBOX = "ci-eval-tests/busybox:1"
PYTHON = "ci-eval-tests/python:bookworm-pytest-yaml"
CACHE = Path(os.environ.get("CI_EVAL_TESTS_CACHE", Path.home() / ".cache" / "ci-eval-tests"))
PYTHON_PACKAGES = "python3,python3-pytest,python3-yaml"  # the checks helpers read rubric.yaml
PYTHON_ROOTFS = CACHE / "python-bookworm-pytest-yaml-rootfs.tar"
# The FROM image of the real Harbor tasks (tests/fixtures/harbor-cookbook): no registry here, so
# `ubuntu:24.04` is a Debian bookworm rootfs imported under that name, holding what their RUN
# steps would apt-get install (a bridge-less engine gives RUN steps no network: `apt-get update`
# fails, and `apt-get install` of an installed package succeeds). What a team behind a firewall
# does too (docs/docker.md "Harbor tasks").
UBUNTU_STAND_IN = "ubuntu:24.04"
UBUNTU_STAND_IN_PACKAGES = "python3,curl,ca-certificates"
UBUNTU_STAND_IN_ROOTFS = CACHE / "ubuntu-stand-in-bookworm-python3-curl-rootfs.tar"


def _answers(env: dict) -> bool:
    try:
        proc = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], env=env,
                              capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and bool(proc.stdout.strip())


class Engine:
    def __init__(self, host: str, sockets: list[str], owned: bool):
        self.host, self.sockets, self.owned = host, sockets, owned

    def docker(self, *args: str, check: bool = True, timeout: float = 300, **kw):
        proc = subprocess.run(["docker", *args], capture_output=True, timeout=timeout, **kw, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)}: {proc.stderr.decode()[-500:]}")
        return proc


def start_dockerd(base: Path, sockets: list[str]) -> subprocess.Popen:
    """dockerd as DESIGN.md says, its roots in `base`, listening on `sockets`; returns once it
    answers (DOCKER_HOST set to the first socket). RuntimeError with its log when it does not."""
    log = open(base / "dockerd.log", "wb")  # noqa: SIM115 - the child holds it
    # SIGTERM to dockerd (a clean shutdown) if the test process dies without its teardown
    dies_with_us = ["setpriv", "--pdeathsig", "TERM"] if shutil.which("setpriv") else []
    proc = subprocess.Popen(
        [*dies_with_us, "dockerd", "--bridge=none", "--iptables=false", "--ip6tables=false",
         "--data-root", str(base / "data"), "--exec-root", str(base / "exec"),
         "--pidfile", str(base / "docker.pid"), *(f"-H=unix://{s}" for s in sockets)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    os.environ["DOCKER_HOST"] = f"unix://{sockets[0]}"
    deadline = time.monotonic() + 60
    while not _answers(dict(os.environ)):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("dockerd did not start: "
                               + (base / "dockerd.log").read_text(errors="replace")[-2000:])
        time.sleep(0.3)
    return proc


def remove_stale_engines() -> None:
    """The folders of test engines whose dockerd is gone (a test process that was killed)."""
    for base in Path(tempfile.gettempdir()).glob("dockerd-tests-*"):
        try:
            os.kill(int((base / "docker.pid").read_text().strip()), 0)
            continue  # its dockerd still runs: another session's
        except (OSError, ValueError):
            pass
        subprocess.run(["umount", "-R", str(base / "data")], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)


def stop_dockerd(proc: subprocess.Popen, base: Path) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    subprocess.run(["umount", "-R", str(base / "data")], capture_output=True, check=False)
    shutil.rmtree(base, ignore_errors=True)


def build_busybox(docker) -> str:
    """BUSYBOX built from Debian's busybox-static (`docker` runs the CLI: docker(*args))."""
    busybox = shutil.which("busybox") or "/bin/busybox"
    context = Path(tempfile.mkdtemp(prefix="busybox-context-"))
    try:
        shutil.copy(busybox, context / "busybox")
        (context / "Dockerfile").write_text(
            'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", '
            '"/bin"]\nRUN mkdir -p /tmp /root && chmod 1777 /tmp\n')
        docker("build", "-q", "-t", BUSYBOX, str(context))
    finally:
        shutil.rmtree(context, ignore_errors=True)
    return BUSYBOX


@pytest.fixture(scope="session")
def docker_engine(tmp_path_factory):
    """The engine; XDG_CACHE_HOME is a temp folder for the session (ci-eval's build logs and
    copied-out image workspaces stay out of the real ~/.cache)."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    try:
        yield from _engine()
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = previous


def _engine():
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI on PATH (apt-get install docker.io; .ci/run does)")
    if _answers(dict(os.environ)):
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        yield Engine(host, [host[len("unix://"):]] if host.startswith("unix://") else [], False)
        return
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        pytest.skip("no Docker engine answers and dockerd cannot be started here (needs root "
                    "and docker.io installed)")
    remove_stale_engines()
    base = Path(tempfile.mkdtemp(prefix="dockerd-tests-"))
    run_dir = Path(f"/run/ci-eval-tests-{os.getpid()}")
    run_dir.mkdir(exist_ok=True)
    sockets = [str(base / "docker.sock"), str(run_dir / "docker.sock")]
    previous = os.environ.get("DOCKER_HOST")
    proc = None
    try:
        proc = start_dockerd(base, sockets)
        yield Engine(os.environ["DOCKER_HOST"], sockets, True)
    finally:
        if previous is None:
            os.environ.pop("DOCKER_HOST", None)
        else:
            os.environ["DOCKER_HOST"] = previous
        if proc is not None:
            stop_dockerd(proc, base)
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def busybox_image(docker_engine):
    """FROM scratch + busybox-static: sh, grep, nc and the rest."""
    busybox = shutil.which("busybox") or "/bin/busybox"
    if not Path(busybox).is_file():
        pytest.skip("busybox-static is not installed (apt-get install busybox-static)")
    if docker_engine.docker("image", "inspect", BUSYBOX, check=False).returncode == 0:
        return BUSYBOX
    return build_busybox(docker_engine.docker)


def cached_rootfs_is_tar(rootfs: Path = PYTHON_ROOTFS) -> bool:
    """The cache holds a real tar (an earlier build once left a directory under the .tar name)."""
    return rootfs.is_file() and tarfile.is_tarfile(rootfs)


def build_python_rootfs(rootfs: Path = PYTHON_ROOTFS, packages: str = PYTHON_PACKAGES) -> None:
    """mmdebstrap into a temporary name, then rename, under a file lock (each xdist worker and
    each concurrent session may get here; the second finds the first's tar). The format is said
    explicitly: mmdebstrap guesses it from the name's extension and takes an unknown one
    (".partial") for a directory."""
    rootfs.parent.mkdir(parents=True, exist_ok=True)
    with open(rootfs.parent / ".python-rootfs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if cached_rootfs_is_tar(rootfs):
            return
        if rootfs.is_dir() and not rootfs.is_symlink():
            shutil.rmtree(rootfs)  # what the old .partial build left under the tar's name
        partial = rootfs.with_name(f"{rootfs.name}.{os.getpid()}.partial")
        try:
            subprocess.run(["mmdebstrap", "--variant=apt", "--format=tar",
                            f"--include={packages}", "bookworm", str(partial)],
                           check=True, capture_output=True, timeout=1800)
            if not tarfile.is_tarfile(partial):
                raise RuntimeError(f"mmdebstrap wrote no tar at {partial}")
            partial.replace(rootfs)
        finally:
            partial.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def python_image(docker_engine):
    """Debian bookworm with python3, pytest and PyYAML (mmdebstrap; the rootfs tar cached)."""
    if docker_engine.docker("image", "inspect", PYTHON, check=False).returncode == 0:
        return PYTHON
    if not cached_rootfs_is_tar():
        if shutil.which("mmdebstrap") is None:
            pytest.skip("mmdebstrap is not installed (apt-get install mmdebstrap), and no "
                        f"cached rootfs at {PYTHON_ROOTFS}")
        build_python_rootfs()
    docker_engine.docker("import", str(PYTHON_ROOTFS), PYTHON)
    return PYTHON


@pytest.fixture(scope="session")
def ubuntu_stand_in(docker_engine):
    """UBUNTU_STAND_IN: Debian bookworm with python3 and curl under the name `ubuntu:24.04`
    (mmdebstrap, ~3 min once; the rootfs tar cached). An engine that already holds an image of
    that name keeps it."""
    if docker_engine.docker("image", "inspect", UBUNTU_STAND_IN, check=False).returncode == 0:
        return UBUNTU_STAND_IN
    if not cached_rootfs_is_tar(UBUNTU_STAND_IN_ROOTFS):
        if shutil.which("mmdebstrap") is None:
            pytest.skip("mmdebstrap is not installed (apt-get install mmdebstrap), and no "
                        f"cached rootfs at {UBUNTU_STAND_IN_ROOTFS}")
        build_python_rootfs(UBUNTU_STAND_IN_ROOTFS, UBUNTU_STAND_IN_PACKAGES)
    docker_engine.docker("import", str(UBUNTU_STAND_IN_ROOTFS), UBUNTU_STAND_IN)
    return UBUNTU_STAND_IN


# The FROM image of the cookbook's multi-container sidecar (`python:3.12-slim`, then `RUN pip
# install flask`): no registry here, so a Debian bookworm rootfs (its Python is 3.11) with pip
# and flask, imported under that name. Debian marks its Python externally managed (PEP 668),
# which the official image does not: the marker is removed, so the RUN step's `pip install
# flask` finds flask installed and succeeds without a network, as on a machine with a mirror.
PYTHON_SLIM_STAND_IN = "python:3.12-slim"
PYTHON_SLIM_STAND_IN_PACKAGES = "python3,python3-pip,python3-flask,python-is-python3"
PYTHON_SLIM_STAND_IN_ROOTFS = CACHE / "python-slim-stand-in-bookworm-flask-rootfs.tar"


@pytest.fixture(scope="session")
def python_slim_stand_in(docker_engine):
    """PYTHON_SLIM_STAND_IN (mmdebstrap, ~3 min once; the rootfs tar cached)."""
    return _slim_stand_in(docker_engine, PYTHON_SLIM_STAND_IN)


# The FROM image `ci-eval import swe-bench` writes for a spec of Python 3.11 (`python:3.11-slim`):
# the same stand-in (Debian bookworm's Python is 3.11) under that name.
PYTHON_311_SLIM_STAND_IN = "python:3.11-slim"


@pytest.fixture(scope="session")
def python_311_slim_stand_in(docker_engine):
    return _slim_stand_in(docker_engine, PYTHON_311_SLIM_STAND_IN)


def _slim_stand_in(docker_engine, name: str) -> str:
    if docker_engine.docker("image", "inspect", name, check=False).returncode == 0:
        return name
    if not cached_rootfs_is_tar(PYTHON_SLIM_STAND_IN_ROOTFS):
        if shutil.which("mmdebstrap") is None:
            pytest.skip("mmdebstrap is not installed (apt-get install mmdebstrap), and no "
                        f"cached rootfs at {PYTHON_SLIM_STAND_IN_ROOTFS}")
        build_python_rootfs(PYTHON_SLIM_STAND_IN_ROOTFS, PYTHON_SLIM_STAND_IN_PACKAGES)
    imported = "ci-eval-tests/python-slim-rootfs:1"
    docker_engine.docker("import", str(PYTHON_SLIM_STAND_IN_ROOTFS), imported)
    context = Path(tempfile.mkdtemp(prefix="python-slim-context-"))
    try:
        (context / "Dockerfile").write_text(
            f"FROM {imported}\nRUN rm -f /usr/lib/python3*/EXTERNALLY-MANAGED\n")
        docker_engine.docker("build", "-q", "-t", name, str(context))
    finally:
        shutil.rmtree(context, ignore_errors=True)
    return name
