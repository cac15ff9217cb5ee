"""The agent's sandbox and the lifetime of everything the harness starts, for real: the CLI (or
the sandbox itself) as a subprocess, real agents, real kills. See docs/isolation.md."""

from __future__ import annotations

import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest
from harness_helpers import NOBODY, cli, live_pids_with, nobody_python, read_lines, write_task

from ci_eval.run.sandbox import isolation, views

SANDBOXED = isolation.detect().agent_sandboxed
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason="no agent sandbox on this machine")


def _marker() -> str:
    return f"{time.time_ns() % 10**6}{os.getpid()}"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _wait_gone(marker: str, seconds: float = 5) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := live_pids_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _kill_all(marker: str) -> None:
    for pid in live_pids_with(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _added_files(diff: str) -> dict[str, list[str]]:
    """File -> added lines, from a recorded diff."""
    files: dict[str, list[str]] = {}
    current = None
    for line in diff.splitlines():
        if line.startswith("+++ b/"):
            current = files.setdefault(line[6:], [])
        elif line.startswith("+") and not line.startswith("+++") and current is not None:
            current.append(line[1:])
    return files


# --- 1. nothing outside the run folder can be changed -------------------------------------------


@needs_sandbox
def test_agent_cannot_plant_a_pth_in_the_interpreter_the_checks_run_with(tmp_path):
    """A .pth in site-packages runs at every Python start, the checks' included: it could write
    the expected answer into the workspace after the agent is gone."""
    marker = _marker()
    name = f"task-001-pth-{marker}"
    repo = tmp_path / "repo"
    write_task(repo, name)
    site = Path(sysconfig.get_paths()["purelib"])
    pth = site / f"zz_ci_eval_test_{marker}.pth"
    # harmless elsewhere: acts only in a workspace of this test's task
    payload = (f"import os; '{name}' in os.getcwd() and "
               "open('greet.txt', 'w').write('hello\\n')\n")
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import pathlib, sys\n"
        f"target = pathlib.Path({str(pth)!r})\n"
        "try:\n"
        f"    target.write_text({payload!r})\n"
        "    print('planted', target.exists())\n"
        "except OSError as exc:\n"
        "    print('refused', exc)\n")
    try:
        proc = cli("run", "-k", "1", "--agent-cmd", f"{sys.executable} {agent}", cwd=repo)
        assert proc.returncode == 0, proc.stderr
        assert not pth.exists(), "the agent's .pth reached the real site-packages"
        record = read_lines(repo / "results" / f"{name}.jsonl")[0]
        assert record["status"] == "fail", record
        assert record["diff"] == ""
        # and a later run with an agent that does nothing fails too
        assert cli("run", "-k", "1", "--agent", "noop", "--out", "noop", cwd=repo).returncode == 0
        assert read_lines(repo / "noop" / f"{name}.jsonl")[0]["status"] == "fail"
    finally:
        pth.unlink(missing_ok=True)


WRITER_AGENT = r'''
import os, sys
results = []
for label, path in [(label, path) for label, path in (arg.split("=", 1) for arg in sys.argv[1:])]:
    try:
        with open(path, "w") as handle:
            handle.write("written by the agent\n")
        with open(path) as handle:
            ok = handle.read() == "written by the agent\n"
        results.append(f"{label} {'writable' if ok else 'unreadable'}")
    except OSError as exc:
        results.append(f"{label} refused {exc.errno}")
for name in sorted(os.listdir("/dev")):
    results.append(f"dev {name}")
results.append(f"home {os.environ['HOME']}")
with open("report.txt", "w") as handle:
    handle.write("\n".join(results) + "\n")
'''


@needs_sandbox
def test_agent_writes_outside_the_run_folder_are_refused_or_discarded(tmp_path):
    marker = _marker()
    repo = tmp_path / "repo"
    write_task(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "existing.txt").write_text("original\n")
    home = Path(os.environ["HOME"])
    targets = {
        "usr": f"/usr/ci-eval-test-{marker}",
        "etc": f"/etc/ci-eval-test-{marker}",
        "sysctl": "/proc/sys/kernel/core_pattern",
        "tmp-new": str(outside / f"new-{marker}"),
        "tmp-existing": str(outside / "existing.txt"),
        "var-tmp": f"/var/tmp/ci-eval-test-{marker}",
        "homefile": str(home / f".ci-eval-test-{marker}"),  # the host's HOME: hidden
        "ownhome": f"$HOME/.ci-eval-test-{marker}",  # the agent's own
        "shm": f"/dev/shm/ci-eval-test-{marker}",
        "usage": "$CI_EVAL_USAGE_FILE",
    }
    script = outside / "writer.py"
    script.write_text(WRITER_AGENT)
    args = " ".join(f"{label}={path}" for label, path in targets.items())
    wrapper = outside / "agent.sh"
    wrapper.write_text(f'exec {sys.executable} {script} {args}\n')
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    proc = cli("run", "-k", "1", "--agent-cmd", f"bash {wrapper}", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
    report = _added_files(record["diff"])["report.txt"]
    status = {line.split()[0]: " ".join(line.split()[1:]) for line in report
              if not line.startswith(("dev ", "home "))}
    # read-only everywhere but the run folder (EROFS = 30) ...
    assert status["usr"] == "refused 30" and status["etc"] == "refused 30"
    assert status["sysctl"] == "refused 30" and status["homefile"] == "refused 30"
    # ... except the private places, whose writes are the agent's alone and discarded
    for label in ("tmp-new", "tmp-existing", "var-tmp", "ownhome", "shm", "usage"):
        assert status[label] == "writable", (label, report)
    for label in ("usr", "etc", "tmp-new", "var-tmp", "homefile", "shm"):
        assert not os.path.exists(targets[label]), label
    assert (outside / "existing.txt").read_text() == "original\n"
    assert Path("/proc/sys/kernel/core_pattern").read_text() == core_pattern
    devices = {line.split()[1] for line in report if line.startswith("dev ")}
    assert {"null", "zero", "urandom", "pts", "shm"} <= devices
    assert not {"vda", "sda", "nvme0n1", "loop0", "kmsg", "mem"} & devices
    own = next(line.split(" ", 1)[1] for line in report if line.startswith("home "))
    assert own.endswith("/home") and not own.startswith(str(home)), own  # a HOME of its own


@needs_sandbox
def test_a_shared_home_gets_a_fresh_folder_where_no_overlay_can_be_made(tmp_path):
    """`home: host` with HOME=/ (no overlay over /): the fallback is a fresh, writable HOME in
    the run, and / stays read-only."""
    repo = tmp_path / "repo"
    write_task(repo)
    agent = tmp_path / "agent.sh"
    agent.write_text('echo "$HOME" > home.txt\n'
                     'echo cache > "$HOME/cache.txt" && echo wrote >> home.txt\n'
                     'echo x > /direct.txt 2>/dev/null || echo refused >> home.txt\n')
    (repo / "ci-eval.yaml").write_text(
        f"agents:\n  shared:\n    command: bash {agent}\n    home: host\n")
    proc = cli("run", "-k", "1", "--agent", "shared", cwd=repo, env={**os.environ, "HOME": "/"})
    assert proc.returncode == 0, proc.stderr
    record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
    lines = _added_files(record["diff"])["home.txt"]
    assert lines[0].endswith(f"/{views.SCRATCH}/home"), lines
    assert lines[1:] == ["wrote", "refused"]
    assert not Path("/direct.txt").exists()


CHECK_VIEW = ("touch here && echo ws-ok; "
              "touch /usr/ci-eval-x 2>/dev/null || echo usr-ro; "
              "cat {hidden}/secret.txt 2>/dev/null || echo hidden-ok; "
              "touch $HOME/.ci-eval-x && echo home-ok; "
              "touch {tmp}/ci-eval-x && echo tmp-ok")


def _run_sandbox(base: Path, python: str, sandbox: list[str], *, user: list[str] = (),
                 home: Path, private=("/tmp",)) -> subprocess.CompletedProcess:
    """The sandbox alone on base/run, hiding base/hidden, running CHECK_VIEW; the run folder is
    then removed as `user`, as the harness would."""
    run_dir, hidden = base / "run", base / "hidden"
    argv = [*user, "unshare", *(["--user", "--map-root-user"] if user else []),
            "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private",
            python, "-I", "-S", *sandbox,
            *(arg for path in private for arg in ("--private", path)), "--tmpfs", "/var/tmp",
            "--hide", str(hidden),
            "--writable", str(run_dir), "--scratch", str(run_dir / views.SCRATCH),
            "--home", str(home), "--", "bash", "-c",
            CHECK_VIEW.format(hidden=hidden, tmp=private[-1] if private else "/var/tmp")]
    try:
        return subprocess.run(argv, cwd=run_dir / "ws", capture_output=True, text=True,
                              env={"PATH": os.environ["PATH"], "HOME": str(home)},
                              timeout=60, check=False)
    finally:
        views.release_scratch(run_dir)
        subprocess.run([*user, python, "-c", f"import shutil; shutil.rmtree({str(run_dir)!r})"],
                       check=True)
        assert not run_dir.exists(), "the run folder could not be removed"


def _sandbox_base(base: Path, owner: int = -1) -> Path:
    for path in (base / "run" / "ws", base / "hidden", base / "home"):
        path.mkdir(parents=True)
    (base / "hidden" / "secret.txt").write_text("solution\n")
    for path in (base, base / "run", base / "run" / "ws", base / "home"):
        os.chown(path, owner, -1)
    return base


@needs_sandbox
def test_sandbox_without_mount_setattr_falls_back_to_one_remount_per_mount(tmp_path):
    """Kernels before 5.12 lack mount_setattr(2): every mount is remounted read-only by itself."""
    base = _sandbox_base(tmp_path)
    code = (f"import sys; sys.path.insert(0, {str(Path(isolation.__file__).parent)!r}); "
            "import sandbox_program; sandbox_program.USE_MOUNT_SETATTR = False; "
            "sys.argv[1:] = sys.argv[2:]; sys.exit(sandbox_program.main())")
    home = Path(os.environ["HOME"])
    proc = _run_sandbox(base, sys.executable, ["-c", code, "-c"], home=home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ws-ok", "usr-ro", "hidden-ok", "home-ok", "tmp-ok"], proc
    assert not Path("/usr/ci-eval-x").exists() and not Path("/tmp/ci-eval-x").exists()
    assert not (home / ".ci-eval-x").exists()




@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to become nobody")
def test_sandbox_as_non_root_in_a_user_namespace():
    """What a non-root harness gets: unshare --user --map-root-user, overlayfs with userxattr."""
    python = nobody_python()
    if python is None:
        pytest.skip("no Python that nobody can run in a user namespace here")
    base = Path(tempfile.mkdtemp(prefix="isolation-test-nobody-"))  # tmp_path is closed to nobody
    try:
        _sandbox_base(base, pwd.getpwnam("nobody").pw_uid)
        base.chmod(0o755)
        shutil.copy(Path(isolation.__file__).with_name("sandbox_program.py"), base / "sandbox_program.py")
        # /tmp not private: HOME in it gets an overlay (userxattr), not the fallback
        proc = _run_sandbox(base, python, [str(base / "sandbox_program.py")], user=NOBODY,
                            home=base / "home", private=())
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["ws-ok", "usr-ro", "hidden-ok", "home-ok", "tmp-ok"], proc
        assert list((base / "home").iterdir()) == []
        assert not Path("/var/tmp/ci-eval-x").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- 2. nothing the harness started outlives it ----------------------------------------------


def _started(marker: str, program: str) -> list[int]:
    """The live processes that are `program` itself (exec'd), whose command line holds marker:
    a prefix (setpriv, a shell) holds the marker too, before the command runs."""
    return [pid for pid in live_pids_with(marker)
            if Path(_cmdline(pid).split("\0", 1)[0]).name == program]


def _start_and_kill_harness(repo: Path, args: list[str], marker: str, program: str,
                            env: dict | None = None):
    proc = subprocess.Popen([sys.executable, "-m", "ci_eval", "run", *args], cwd=repo, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(_started(marker, program)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_started(marker, program)) >= 2, "the commands never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return _wait_gone(marker)
    finally:
        proc.kill()
        proc.wait()
        _kill_all(marker)


@pytest.mark.parametrize("isolated", [True, False])
def test_kill_9_of_the_harness_kills_every_agent(tmp_path, isolated):
    if isolated and not SANDBOXED:
        pytest.skip("no agent sandbox on this machine")
    marker = _marker()
    repo = tmp_path / "repo"
    write_task(repo)
    env = {**os.environ}
    if not isolated:
        env["CI_EVAL_NO_ISOLATION"] = "1"
    # unisolated, only the agent's own process is guaranteed (docs/isolation.md): exec, no child
    agent = f"sleep 3{marker}" if not isolated else f"bash -c 'sleep 3{marker}; sleep 4{marker}'"
    survivors = _start_and_kill_harness(
        repo, ["-k", "2", "-j", "2", "--timeout", "600", "--agent-cmd", agent], marker, "sleep", env)
    assert survivors == [], "agents outlived the harness"


def test_kill_9_of_the_harness_kills_running_checks(tmp_path):
    marker = _marker()
    repo = tmp_path / "repo"
    write_task(repo, f"task-001-slow-checks-{marker}",
               checks="import time\ntime.sleep(600)\n",
               metadata={"timeout_seconds": {"checks": 600}})
    survivors = _start_and_kill_harness(repo, ["--agent", "reference", "-k", "2", "-j", "2"], marker,
                                        Path(sys.executable).name)
    assert survivors == [], "checks outlived the harness"


def test_without_setpriv_a_python_shim_arms_the_parent_death_signal(tmp_path):
    """Where util-linux's setpriv is missing, the same guarantee from a small Python prefix."""
    marker = _marker()
    script = tmp_path / "harness.py"
    script.write_text(
        "import os, sys, threading\n"
        "os.environ['PATH'] = '/nonexistent'\n"  # no setpriv to find
        "from ci_eval.run.sandbox import process\n"
        "assert 'setpriv' not in process.death_signal_prefix()[0], process.death_signal_prefix()\n"
        "def run():\n"
        f"    print(process.run_process(['/bin/sleep', '3{marker}'], cwd='/', env={{}},\n"
        "                              timeout=600), flush=True)\n"
        "threading.Thread(target=run).start()\n"
        "print('started', flush=True)\n"
        "threading.Event().wait()\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while not _started(marker, "sleep") and time.monotonic() < deadline:
            time.sleep(0.05)  # the shim's cmdline holds the marker too: wait for the exec
        assert _started(marker, "sleep"), "sleep never started"
        proc.send_signal(signal.SIGKILL)
        output = proc.communicate()[0]
        assert _wait_gone(marker) == [], output
    finally:
        proc.kill()
        proc.wait()
        _kill_all(marker)


@pytest.mark.parametrize("setpriv", [True, False])
def test_a_harness_killed_before_the_signal_is_armed_leaves_no_command_running(tmp_path, setpriv):
    """kill -9 between the fork and the prefix's prctl: the signal would never come, so the
    prefix must see that its parent is gone and not run the command. Here the forked child waits
    for the harness to die (its end of a pipe at EOF) and only then execs the prefix."""
    marker = _marker()
    ran = tmp_path / "ran"
    script = tmp_path / "harness.py"
    script.write_text(
        "import os, sys\n"
        + ("" if setpriv else "os.environ['PATH'] = '/nonexistent'\n")
        + "from ci_eval.run.sandbox import process\n"
        "prefix = process.death_signal_prefix()\n"
        f"assert ('setpriv' in prefix[0]) is {setpriv}, prefix\n"
        "read_end, write_end = os.pipe()\n"
        "if os.fork() == 0:\n"
        "    os.close(write_end)\n"
        "    os.read(read_end, 1)\n"  # EOF: the harness is gone
        f"    command = ['/bin/sh', '-c', 'touch {ran}; exec sleep 3{marker}']\n"
        "    os.execv(prefix[0], [*prefix, *command])\n"
        "os._exit(0)\n")
    done_read, done_write = os.pipe()  # EOF once the command's side has exited
    try:
        subprocess.run([sys.executable, str(script)], pass_fds=(done_write,), check=True,
                       timeout=60)
        os.close(done_write)
        done_write = -1
        ready, _, _ = select.select([done_read], [], [], 30)
        assert ready and os.read(done_read, 1) == b"", "the command's side is still running"
        assert not ran.exists(), "the command ran with no parent-death signal"
        assert live_pids_with(marker) == []
    finally:
        for fd in (done_read, done_write):
            if fd >= 0:
                os.close(fd)
        _kill_all(marker)


# --- 3. results folders outside the repo root ---------------------------------------------------

READER_AGENT = r'''
import os, pathlib, sys
found = []
if os.environ["CI_EVAL_RUN"] == "1":
    pathlib.Path("greet.txt").write_text("hello\n")  # run 1 solves the task honestly
else:  # later runs look for a recorded diff to copy
    for path in pathlib.Path(sys.argv[1]).rglob("*.jsonl"):
        found.append(str(path))
        if "+hello" in path.read_text():
            pathlib.Path("greet.txt").write_text("hello\n")
pathlib.Path("found.txt").write_text("\n".join([*found, "END"]) + "\n")
'''


@needs_sandbox
def test_run_agent_hides_the_folders_it_is_told_to(tmp_path):
    """agents.run_agent(hide=...) with a real sandboxed agent: runner passes its results folder."""
    from ci_eval.agents.config import inline_agent
    from ci_eval.run.agent.start import RunPaths, run_agent
    from ci_eval.run.workspace.build import create_workspace, make_runs_base, remove_tree
    from ci_eval.tasks.load import load_tasks

    repo = tmp_path / "repo"
    write_task(repo)
    results = tmp_path / "results-elsewhere"
    results.mkdir()
    (results / "task-001-greet.jsonl").write_text('{"diff": "+hello"}\n')
    agent_py = tmp_path / "reader.py"
    agent_py.write_text(READER_AGENT)
    task = load_tasks(repo)[0]
    runs_base = make_runs_base()
    try:
        for hide, expect in (((), "hello\n"), ((results,), "bye\n")):
            run_dir = Path(runs_base / f"run-{len(hide)}")
            run_dir.mkdir()
            paths = RunPaths(run_dir=run_dir, workspace=run_dir / "workspace")
            create_workspace(task.repo_state, paths.workspace)
            paths.prompt_file.write_text("x")
            outcome = run_agent(inline_agent(f"{sys.executable} {agent_py} {results}"), task, 2,
                                paths, repo_root=repo, runs_base=runs_base, timeout=60,
                                isolation=isolation.detect(), hide=hide)
            assert outcome.kind.value == "done" and outcome.exit_code == 0, outcome
            assert (paths.workspace / "greet.txt").read_text() == expect, hide
    finally:
        remove_tree(runs_base)


@needs_sandbox
def test_results_folder_outside_the_repo_is_hidden_from_later_agents(tmp_path):
    """An agent must not copy the diff an earlier run recorded (here: its own run 1, resumed)."""
    repo = tmp_path / "repo"
    write_task(repo)
    out = tmp_path / "results-elsewhere"
    agent_py = tmp_path / "reader.py"
    agent_py.write_text(READER_AGENT)
    agent = f"{sys.executable} {agent_py} {out}"
    assert cli("run", "-k", "1", "--out", str(out), "--agent-cmd", agent, cwd=repo).returncode == 0
    assert "+hello" in read_lines(out / "task-001-greet.jsonl")[0]["diff"]
    proc = cli("run", "-k", "2", "--resume", "--out", str(out), "--agent-cmd", agent, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    record = read_lines(out / "task-001-greet.jsonl")[-1]
    assert record["run"] == 2 and record["status"] == "fail", record
    assert _added_files(record["diff"])["found.txt"] == ["END"]


# --- 4. without isolation, descendants that left the group ---------------------------------------


@pytest.mark.parametrize("ending", ["timeout", "exit"])
def test_unisolated_agent_setsid_children_do_not_outlive_the_run(tmp_path, ending):
    marker = _marker()
    repo = tmp_path / "repo"
    write_task(repo)
    agent = tmp_path / "agent.sh"
    agent.write_text(f"setsid sleep 37{marker} &\n"
                     f"(setsid sleep 38{marker} &)\n"  # a daemon: its parent is gone at once
                     + (f"sleep 60{marker}\n" if ending == "timeout" else "sleep 0.5\n"))
    env = {**os.environ, "CI_EVAL_NO_ISOLATION": "1"}
    try:
        proc = cli("run", "-k", "1", "--timeout", "2", "--agent-cmd", f"bash {agent}",
                   cwd=repo, env=env)
        assert proc.returncode == 0, proc.stderr
        record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
        assert record["status"] == ("timeout" if ending == "timeout" else "fail"), record
        assert _wait_gone(marker, 2) == []
    finally:
        _kill_all(marker)
