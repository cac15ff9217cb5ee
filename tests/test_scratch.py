"""ci-eval's temp folders carry their process's PID (and PID namespace): what a killed invocation
left behind is removed by the next one, and nothing else is (run/sandbox/scratch.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from ci_eval.run.sandbox import scratch


@pytest.fixture
def temp(tmp_path, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setattr(scratch, "_swept", False)
    return folder


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_dead_process_folders_of_every_kind_go_and_nothing_else(temp, tmp_path):
    dead, ns = dead_pid(), scratch._pid_namespace()
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("x")
    gone = [f"ci-eval-run-{dead}-{ns}-abcd1234", f"ci-eval-verify-{dead}-{ns}-a_b1c2d3",
            f"ci-eval-checks-start-{dead}-{ns}-zz99zz99",
            f"ci-eval-run-{dead}-qwerty12"]  # a runs folder named before the PID namespace
    kept = [f"ci-eval-run-{os.getpid()}-{ns}-live1234",  # this process: alive
            f"ci-eval-run-{dead}-{ns + 1}-otherns1",  # another PID namespace counts apart
            "ci-eval-verify-0f3zy1t0",  # no PID in the name: whose it is cannot be known
            f"ci-eval-run-{dead}-{ns}-kept1234",  # run --keep
            f"ci-eval-probe-{dead}-{ns}-linked12",  # a link: not followed, not removed
            f"ci-eval-grade-{dead}-{ns}-afile123",  # a file, not a folder
            f"other-{dead}-{ns}-abcd1234"]
    for name in gone + kept[:4]:
        (temp / name / "inside").mkdir(parents=True)
        (temp / name / "inside" / "f").write_text("x")
    (temp / kept[3] / scratch.KEPT_MARKER).write_text("kept\n")
    (temp / kept[4]).symlink_to(outside)
    (temp / kept[5]).write_text("x")
    (temp / kept[6]).mkdir()
    scratch.remove_stale()
    assert sorted(p.name for p in temp.iterdir()) == sorted(kept)
    assert (outside / "keep.txt").read_text() == "x"


def test_the_first_folder_a_process_makes_sweeps_once(temp):
    dead, ns = dead_pid(), scratch._pid_namespace()
    (temp / f"ci-eval-script-{dead}-{ns}-abcd1234").mkdir()
    made = scratch.make("verify")
    assert made.parent == temp.resolve() and made.is_dir()
    assert made.name.startswith(f"ci-eval-verify-{os.getpid()}-{ns}-")
    assert [p.name for p in temp.iterdir()] == [made.name]
    (temp / f"ci-eval-script-{dead}-{ns}-later123").mkdir()
    scratch.make("grade")  # not again: one listing of the temp folder per process
    assert (temp / f"ci-eval-script-{dead}-{ns}-later123").is_dir()


def test_a_kept_runs_folder_is_marked_and_survives_the_next_sweep(temp):
    kept = scratch.make("run", keep=True)
    assert (kept / scratch.KEPT_MARKER).is_file()
    assert scratch._NAME.fullmatch(kept.name)


def test_a_killed_invocation_folders_are_removed_by_the_next(temp, tmp_path):
    """A real process makes a folder of each kind it uses and is killed with -9."""
    code = ("import os, sys, time\nfrom ci_eval.run.sandbox import scratch\n"
            "for kind in ('run', 'script', 'verify', 'probe'): scratch.make(kind)\n"
            "print('made', flush=True)\ntime.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "TMPDIR": str(temp)})
    assert child.stdout.readline().strip() == "made"
    assert len([p for p in temp.iterdir() if f"-{child.pid}-" in p.name]) == 4
    scratch.remove_stale()  # the process is alive: its folders stay
    assert len([p for p in temp.iterdir() if f"-{child.pid}-" in p.name]) == 4
    child.kill()
    child.wait()
    child.stdout.close()
    scratch.remove_stale()
    assert not [p for p in temp.iterdir() if f"-{child.pid}-" in p.name]
