"""The overlays' upper layers in memory (sandbox_program._overlay_in_memory), for real: the
sandbox program alone in new namespaces, as root and as nobody in a user namespace.

Where the run folder lies inside the folder an overlay covers (runs in /tmp, /tmp private), the
upper layer is a tmpfs mounted over that folder itself, under the overlay: nothing is made in
the run folder, the command cannot see the upper layer, its writes are discarded, and where
overlayfs refuses, the folder is shown as it was (the fallbacks of docs/isolation.md)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from harness_helpers import NOBODY, nobody_python

from ci_eval.run.sandbox import isolation, views

PROGRAM = Path(isolation.__file__).with_name("sandbox_program.py")
needs_sandbox = pytest.mark.skipif(not isolation.detect().agent_sandboxed,
                                   reason="no agent sandbox on this machine")


def _sandbox(base: Path, script: str, *, program: list[str], user: list[str] = (),
             home: Path | None = None, tmpfs=("/var/tmp",)) -> subprocess.CompletedProcess:
    """`bash -c script` in the sandbox program's view of base/run (writable, scratch in it),
    /tmp private, `tmpfs` empty; the run folder's scratch released as the harness does."""
    run_dir = base / "run"
    argv = [*user, "unshare", *(["--user", "--map-root-user"] if user else []),
            "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation",
            "private", *program, "--private", "/tmp", *(a for p in tmpfs for a in ("--tmpfs", p)),
            "--writable", str(run_dir), "--scratch", str(run_dir / views.SCRATCH),
            *(["--home", str(home)] if home else []), "--", "bash", "-c", script]
    try:
        return subprocess.run(argv, cwd=run_dir, capture_output=True, text=True, timeout=60,
                              env={"PATH": os.environ["PATH"], "HOME": str(home or base)},
                              check=False)
    finally:
        views.release_scratch(run_dir)


WRITE_TMP = ('echo written > /tmp/{name} && cat /tmp/{name}; '
             'test -e /tmp/upper || test -e /tmp/work || echo upper-unseen; '
             'ls -A "$PWD"; echo end')


def _memory_overlay_case(base: Path, program: list[str], user: list[str] = ()) -> None:
    name = f"ci-eval-overlay-test-{uuid.uuid4().hex}"
    assert str(base).startswith("/tmp/"), "the run folder must lie inside the private /tmp"
    assert not Path("/tmp/upper").exists() and not Path("/tmp/work").exists()
    proc = _sandbox(base, WRITE_TMP.format(name=name), program=program, user=user)
    assert proc.returncode == 0, proc.stderr
    # written and read back through the overlay; the upper layer is not shown in /tmp; the
    # run folder holds no folder for it
    assert proc.stdout.split() == ["written", "upper-unseen", "end"], proc
    assert not Path("/tmp", name).exists()  # discarded with the sandbox
    assert not (base / "run" / views.SCRATCH).exists()


@needs_sandbox
def test_tmp_overlay_keeps_its_upper_layer_in_memory_out_of_the_run_folder():
    base = Path(tempfile.mkdtemp(prefix="overlay-test-", dir="/tmp"))
    try:
        (base / "run").mkdir()
        _memory_overlay_case(base, [sys.executable, "-I", "-S", str(PROGRAM)])
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to become nobody")
def test_tmp_overlay_in_memory_in_a_user_namespace():
    """A non-root harness: the tmpfs and the overlay (userxattr) made as mapped root."""
    python = nobody_python()
    if python is None:
        pytest.skip("no Python that nobody can run in a user namespace here")
    base = Path(tempfile.mkdtemp(prefix="overlay-test-nobody-", dir="/tmp"))
    try:
        base.chmod(0o755)
        (base / "run").mkdir()
        os.chown(base / "run", pwd.getpwnam("nobody").pw_uid, -1)
        shutil.copy(PROGRAM, base / "sandbox_program.py")
        _memory_overlay_case(base, [python, "-I", "-S", str(base / "sandbox_program.py")],
                             user=NOBODY)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_sandbox
def test_where_overlayfs_refuses_the_folder_is_shown_as_it_was():
    """The tmpfs over the folder is taken off again when the overlay cannot be mounted: a
    shared HOME holding the run folder (its upper layer would be inside it) stays readable as
    it was, and the command gets the fresh HOME in the run folder instead."""
    base = Path(tempfile.mkdtemp(prefix="overlay-test-refused-", dir="/var/tmp"))
    try:
        (base / "run").mkdir()
        (base / "notes.txt").write_text("kept\n")
        code = (f"import sys; sys.path.insert(0, {str(PROGRAM.parent)!r}); "
                "import sandbox_program; sandbox_program._mount_overlay = lambda *a: False; "
                "sys.argv[1:] = sys.argv[2:]; sys.exit(sandbox_program.main())")
        proc = _sandbox(base, f'cat {base}/notes.txt; echo "$HOME"; '
                        f'touch {base}/new.txt 2>/dev/null || echo refused',
                        program=[sys.executable, "-I", "-S", "-c", code, "-c"], home=base,
                        tmpfs=())
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["kept", str(base / "run" / views.SCRATCH / "home"),
                                       "refused"], proc
        assert not (base / "new.txt").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
