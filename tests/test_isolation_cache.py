"""isolation.detect()'s full answer kept across processes (run/sandbox/isolation_cache.py,
docs/isolation.md "Without namespaces"): only "both sandboxes work", under a key of what the
answer depends on, read back only from a file of this user's that no one else may write."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ci_eval.results.notices import ChecksIsolation
from ci_eval.run.sandbox import isolation, isolation_cache

SANDBOXED = isolation.detect().checks_sandboxed and isolation.detect().agent_sandboxed
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason="no agent/checks sandbox here")


@pytest.fixture
def probes(tmp_path, monkeypatch):
    """A fresh detect() with its cache under tmp_path: the real probes, counted."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(isolation_cache.SWITCH_ENV, raising=False)
    monkeypatch.delenv("CI_EVAL_NO_ISOLATION", raising=False)
    calls = []
    real = isolation._probed

    def counted(user):
        calls.append(user)
        return real(user)

    monkeypatch.setattr(isolation, "_probed", counted)
    isolation.detect.cache_clear()
    yield calls
    isolation.detect.cache_clear()


def _fresh_detect() -> isolation.Isolation:
    isolation.detect.cache_clear()
    return isolation.detect()


def _kept(tmp_path: Path) -> Path:
    """The file a start with XDG_CACHE_HOME=tmp_path/xdg keeps its answer in."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        patch.delenv(isolation_cache.SWITCH_ENV, raising=False)
        kept = isolation_cache.cache_file()
    assert kept is not None and kept.parent == tmp_path / "xdg" / "ci-eval"
    assert kept.name.startswith(f"isolation-{os.geteuid()}-")
    return kept


@needs_sandbox
def test_the_full_answer_is_kept_and_read_back_without_probing(tmp_path, probes):
    first = _fresh_detect()
    kept = _kept(tmp_path)
    assert len(probes) == 1 and first.agent_sandboxed and first.checks_sandboxed
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert json.loads(kept.read_text()) == {"key": isolation_cache.platform_key(),
                                            "sandboxed": True}
    assert _fresh_detect() == first and len(probes) == 1


@needs_sandbox
@pytest.mark.parametrize("fact", ["proc", "namespaces", "sandbox_sources", "ci_eval", "ids"])
def test_a_changed_fact_probes_again(tmp_path, probes, monkeypatch, fact):
    _fresh_detect()
    real = isolation_cache.platform_facts

    def changed():
        facts = real()
        facts[fact] = [facts[fact], "changed"]
        return facts

    monkeypatch.setattr(isolation_cache, "platform_facts", changed)
    assert _fresh_detect().checks_sandboxed and len(probes) == 2
    assert json.loads(_kept(tmp_path).read_text())["key"] == isolation_cache.platform_key()
    assert _fresh_detect().checks_sandboxed and len(probes) == 2


@needs_sandbox
def test_a_degraded_answer_is_never_kept_and_drops_the_kept_one(tmp_path, probes, monkeypatch):
    """The checks' probe failing, as on a machine without their namespaces, under another key:
    the kept answer goes, none is written, and the next start probes again."""
    _fresh_detect()
    real = isolation._probe

    def checks_refused(user, net, notices, what, consequence):
        if not net:
            return real(user, net, notices, what, consequence)
        notices.append(f"no {what} here (refused): {consequence}")
        return False

    monkeypatch.setattr(isolation, "_probe", checks_refused)
    monkeypatch.setattr(isolation_cache, "platform_facts", lambda: {"another": "machine state"})
    degraded = _fresh_detect()
    assert degraded.checks is not ChecksIsolation.SANDBOX and degraded.notices
    assert not _kept(tmp_path).exists()
    assert _fresh_detect() == degraded and len(probes) == 3


def _forged_files(kept: Path, key: str):
    """Files that hold a right-looking answer but must not be read."""
    good = json.dumps({"key": key, "sandboxed": True})
    yield "writable by others", lambda: (kept.write_text(good), kept.chmod(0o666))
    yield "writable by the group", lambda: (kept.write_text(good), kept.chmod(0o620))
    target = kept.with_name("elsewhere.json")
    yield "a link", lambda: (target.write_text(good), target.chmod(0o600),
                             kept.symlink_to(target))
    yield "another key", lambda: kept.write_text(json.dumps({"key": "0" * 64, "sandboxed": True}))
    yield "more than the answer", lambda: kept.write_text(json.dumps(
        {"key": key, "sandboxed": True, "notices": []}))
    yield "not JSON", lambda: kept.write_text(good[:-1])
    yield "a folder", lambda: kept.mkdir()
    yield "a FIFO (opening it must not wait for a writer)", lambda: os.mkfifo(kept, 0o600)
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody").pw_uid
        yield "another user's", lambda: (kept.write_text(good), kept.chmod(0o600),
                                         os.chown(kept, nobody, -1))


@needs_sandbox
def test_a_file_that_is_not_this_user_s_alone_is_not_read(tmp_path, probes):
    kept = _kept(tmp_path)
    key = isolation_cache.platform_key()
    for name, forge in _forged_files(kept, key):
        kept.parent.mkdir(parents=True, exist_ok=True)
        forge()
        before = len(probes)
        assert isolation_cache.holds_sandboxed(kept, key) is False, name
        assert _fresh_detect().checks_sandboxed and len(probes) == before + 1, name
        if name != "a folder":  # the probe's answer replaced the file (a link: the link)
            assert not kept.is_symlink() and isolation_cache.holds_sandboxed(kept, key), name
        kept.rmdir() if kept.is_dir() else kept.unlink()


@needs_sandbox
def test_no_isolation_wins_over_a_kept_answer_and_the_switch_turns_it_off(tmp_path, probes,
                                                                           monkeypatch):
    _fresh_detect()
    monkeypatch.setenv("CI_EVAL_NO_ISOLATION", "1")
    assert not _fresh_detect().agent_sandboxed
    monkeypatch.delenv("CI_EVAL_NO_ISOLATION")
    monkeypatch.setenv(isolation_cache.SWITCH_ENV, "0")
    _kept(tmp_path).unlink()
    assert _fresh_detect().checks_sandboxed and len(probes) == 2
    assert not _kept(tmp_path).exists()


@needs_sandbox
def test_runs_started_on_a_kept_answer_are_sandboxed(tmp_path, repo_root, make_task, cli):
    """Two `ci-eval run` starts: the first probes and keeps the answer, the second reads it;
    both record sandboxed runs."""
    make_task(repo_root)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    for out in ("first", "second"):
        result = cli("run", "--agent", "reference", "-k", "1", "--out", out, cwd=repo_root,
                     env=env)
        assert result.returncode == 0, result.stderr
        lines = (repo_root / out / "task-001-example.jsonl").read_text().splitlines()
        assert [json.loads(line)["isolation"] for line in lines] == [
            "agent-sandbox,checks-sandbox"]
        assert _kept(tmp_path).is_file()


def test_two_installs_keep_an_answer_each(monkeypatch, tmp_path):
    """Two checkouts (or interpreters) on one machine do not overwrite each other's answer."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    here = isolation_cache.cache_file()
    monkeypatch.setattr(isolation_cache, "SANDBOX_SOURCES", tmp_path / "other" / "sandbox")
    elsewhere = isolation_cache.cache_file()
    monkeypatch.setattr(isolation_cache.sys, "executable", "/other/python3")
    assert len({here, elsewhere, isolation_cache.cache_file()}) == 3


@needs_sandbox
def test_other_installs_files_unused_for_a_week_go_when_an_answer_is_written(tmp_path, probes):
    folder = tmp_path / "xdg" / "ci-eval"
    folder.mkdir(parents=True)
    old, recent = (folder / f"isolation-{os.geteuid()}-{name}.json" for name in ("0ld", "recent"))
    for path in (old, recent):
        path.write_text("{}")
    week = isolation_cache.UNUSED_DAYS * 86400
    os.utime(old, (time.time() - week - 60,) * 2)
    os.utime(recent, (time.time() - week + 3600,) * 2)
    foreign = folder / "build-logs"
    foreign.mkdir()
    os.utime(foreign, (time.time() - 2 * week,) * 2)
    _fresh_detect()
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [recent.name, _kept(tmp_path).name, "build-logs"])


NO_SYS_ADMIN = ["setpriv", "--bounding-set", "-sys_admin"]  # root that cannot make namespaces


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root (and setpriv) to take the namespaces away")
def test_a_kept_answer_the_machine_no_longer_honours_makes_runs_errors_not_unsandboxed(
        tmp_path, repo_root, make_task):
    """A root without CAP_SYS_ADMIN can make no namespace. With a "sandboxed" kept under its
    own key (stale, or forged), its run is an infrastructure error; with none, it probes,
    runs unisolated with the notices, and keeps nothing."""
    make_task(repo_root)
    agent = tmp_path / "agent.sh"
    agent.write_text("printf '42\\n' > answer.txt\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(isolation_cache.SWITCH_ENV, None)
    env.pop("CI_EVAL_NO_ISOLATION", None)
    asked = subprocess.run([*NO_SYS_ADMIN, sys.executable, "-c",
                            "from ci_eval.run.sandbox import isolation_cache as c; "
                            "print(c.cache_file(), c.platform_key())"],
                           env=env, capture_output=True, text=True, check=True)
    kept, key = asked.stdout.split()
    Path(kept).parent.mkdir(mode=0o700, parents=True)
    Path(kept).write_text(json.dumps({"key": key, "sandboxed": True}))
    Path(kept).chmod(0o600)

    def run(out: str) -> dict:
        subprocess.run([*NO_SYS_ADMIN, sys.executable, "-m", "ci_eval", "run", "--agent-cmd",
                        f"sh {agent}", "-k", "1", "--out", out], cwd=repo_root, env=env,
                       capture_output=True, text=True, timeout=120, check=False)
        (line,) = (repo_root / out / "task-001-example.jsonl").read_text().splitlines()
        return json.loads(line)

    stale = run("stale")
    assert stale["status"] == "error" and stale["reason"].startswith("agent sandbox:"), stale
    Path(kept).unlink()
    probed = run("probed")
    assert (probed["status"], probed["isolation"]) == ("pass", "agent-unisolated,checks-online")
    assert not Path(kept).exists()
