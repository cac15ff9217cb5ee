"""Class 2: the checks run agent code (pytest imports the agent's calc.py), so they are sandboxed.

Defence: isolation.checks_argv (mount + PID + network namespaces; the repo root, runs, results
and /run hidden; the task folder bound back read-only with solution/ and negatives/ masked;
only the workspace and a reports folder writable; an allow-listed environment).

Most probes share one `ci-eval run` (one task per probe, -k 1, --keep so that what each probe
found, written to loot.txt in its workspace, can be read): the agent installs the probe as
calc.py, the checks import it, it runs as the checks would let it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from .conftest import GOOD_CALC, needs_sandbox

PROBE_HEAD = '''
import glob, json, os, socket, subprocess, sys, time
CONFIG = json.loads({config!r})
found = {{}}

def attempt(label, action):
    try:
        found[label] = repr(action())[:2000]
    except BaseException as exc:
        found[label] = f"refused: {{type(exc).__name__}}: {{exc}}"[:500]

def read(path):
    with open(path, "rb") as handle:
        return handle.read()
'''

PROBE_TAIL = '''
found["ran"] = "yes"
with open("loot.txt", "w") as handle:
    json.dump(found, handle, indent=1)

def add(a, b):
    return a - b
'''

PROBES = {
    "task-001-environ": '''
attempt("ppid", lambda: (os.getppid(), read(f"/proc/{os.getppid()}/environ")))
attempt("self", lambda: read("/proc/self/environ"))
attempt("pid1", lambda: read("/proc/1/environ"))
attempt("pids", lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
def every_environ():
    out = {}
    for path in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/task/*/environ"):
        try:
            out[path] = read(path)
        except OSError as exc:
            out[path] = str(exc)
    return out
attempt("all", every_environ)
attempt("env", lambda: dict(os.environ))
attempt("cmdlines", lambda: {p: read(p) for p in glob.glob("/proc/[0-9]*/cmdline")})
''',
    "task-002-sockets": '''
def unix(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect(path)
    s.sendall(b"checks")
    return "connected"
for label in ("run", "tmp", "abstract"):
    attempt(label, lambda label=label: unix(CONFIG[label]))
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", CONFIG["port"]), timeout=2) and "connected")
attempt("dns", lambda: socket.getaddrinfo("example.com", 443))
attempt("run-listing", lambda: os.listdir("/run"))
''',
    "task-003-solution": '''
task = os.environ["CI_EVAL_TASK_DIR"]
attempt("solution", lambda: {p: read(p) for p in glob.glob(task + "/solution/**", recursive=True) if os.path.isfile(p)})
attempt("negatives", lambda: {p: read(p) for p in glob.glob(task + "/negatives/**", recursive=True) if os.path.isfile(p)})
attempt("other-task", lambda: read(CONFIG["other_solution"]))
attempt("repo-listing", lambda: os.listdir(CONFIG["repo"]))
attempt("tasks-listing", lambda: os.listdir(CONFIG["repo"] + "/tasks"))
attempt("results", lambda: os.listdir(CONFIG["repo"] + "/results"))
attempt("runs", lambda: os.listdir(os.path.dirname(os.path.dirname(os.getcwd()))))
attempt("find", lambda: subprocess.run(["grep", "-rl", CONFIG["needle"], "/tmp", CONFIG["repo"]], capture_output=True, text=True, timeout=20).stdout)
attempt("escape", lambda: subprocess.run(["unshare", "-Urm", "sh", "-c", "umount -l " + CONFIG["repo"] + "; cat " + task + "/solution/solve.sh"], capture_output=True, text=True, timeout=20).stdout)
''',
    "task-004-writes": '''
import sysconfig
def write(path):
    with open(path, "a") as handle:
        handle.write("written by code under test\\n")
    return "written"
task = os.environ["CI_EVAL_TASK_DIR"]
attempt("checks.py", lambda: write(task + "/checks.py"))
attempt("repo-state", lambda: write(task + "/repo-state/calc.py"))
attempt("pth", lambda: write(sysconfig.get_paths()["purelib"] + "/zz-" + CONFIG["marker"] + ".pth"))
attempt("ci_eval", lambda: write(CONFIG["ci_eval"]))
attempt("canary", lambda: write(CONFIG["canary"]))
attempt("pwned", lambda: write(CONFIG["pwned"]))
attempt("results", lambda: write(CONFIG["repo"] + "/results/task-004-writes.jsonl"))
attempt("home", lambda: write(os.path.expanduser("~/.adv-" + CONFIG["marker"])))
attempt("sysctl", lambda: write("/proc/sys/kernel/core_pattern"))
attempt("mount", lambda: subprocess.run(["mount", "-t", "tmpfs", "x", task], capture_output=True, text=True).stderr)
''',
    "task-005-fds": '''
def fds():
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            out[name] = os.readlink("/proc/self/fd/" + name)
        except OSError:
            pass
    return out
attempt("own", fds)
attempt("parent", lambda: {n: os.readlink(f"/proc/{os.getppid()}/fd/{n}") for n in os.listdir(f"/proc/{os.getppid()}/fd")})
def forge():
    done = []
    for fd in range(3, 256):
        try:
            os.write(fd, b"pass")
            done.append(fd)
        except OSError:
            pass
    return done
attempt("forged", forge)
''',
    "task-006-daemon": '''
def daemon():
    if os.fork():
        return "forked"
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, 4096)
    line = json.dumps({"run": 1, "task": "task-020-target", "status": "pass", "passed": True,
                       "agent": "noop", "attempt": 1, "k": 1, "requested": 1})
    end = time.time() + 30
    while time.time() < end:
        for path in CONFIG["results"]:
            try:
                with open(path, "a") as handle:
                    handle.write(line + "\\n")
            except OSError:
                pass
        time.sleep(0.2)
    os._exit(0)
attempt("daemon", lambda: subprocess.Popen(["sleep", "30." + CONFIG["marker"]], start_new_session=True).pid)
attempt("forker", daemon)
''',
}


class Listener:
    """Unix sockets (under /run, in /tmp, abstract) and a loopback TCP port; records connects."""

    def __init__(self, arena):
        self.paths = {"run": f"/run/adv-{arena.marker}.sock",
                      "tmp": str(arena.base / "adv.sock"),
                      "abstract": f"\0adv-{arena.marker}"}
        self.sockets = []
        for path in self.paths.values():
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(path)
            self.sockets.append(sock)
        tcp = socket.socket()
        tcp.bind(("127.0.0.1", 0))
        self.port = tcp.getsockname()[1]
        self.sockets.append(tcp)
        self.connections = []
        self.stop = threading.Event()
        for sock in self.sockets:
            sock.listen()
            sock.settimeout(0.1)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            for sock in self.sockets:
                try:
                    conn, _ = sock.accept()
                except (TimeoutError, OSError):
                    continue
                self.connections.append(sock.getsockname())
                conn.close()

    def close(self):
        self.stop.set()
        self.thread.join()
        for sock in self.sockets:
            sock.close()
        for path in self.paths.values():
            if not path.startswith("\0"):
                Path(path).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def probes(module_arena):
    arena = module_arena
    listener = Listener(arena)
    other = arena.task("task-010-other")  # another task: its solution must stay out of reach too
    (other / "negatives").mkdir()
    (other / "negatives" / "wrong.sh").write_text(f"# {arena.solution_canary}\n")
    late = arena.repo / "later"  # a later invocation's results, for the daemon
    config = {
        "run": listener.paths["run"], "tmp": listener.paths["tmp"],
        "abstract": listener.paths["abstract"], "port": listener.port,
        "repo": str(arena.repo), "needle": "SOLUTION-CANARY-",
        "other_solution": str(other / "solution" / "solve.sh"),
        "marker": arena.marker, "canary": str(arena.base / "canary.txt"),
        "pwned": str(arena.pwned("checks")),
        "ci_eval": str(Path(__file__).resolve().parents[2] / "ci_eval" / "checks.py"),
        "results": [str(arena.repo / "results" / "task-006-daemon.jsonl"),
                    str(late / "task-020-target.jsonl")],
    }
    for name, body in PROBES.items():
        arena.calc_task(name, extra={"negatives/wrong.sh": f"# {arena.solution_canary}\n"})
        arena.file(f"{name}.py", PROBE_HEAD.format(config=json.dumps(config)) + body + PROBE_TAIL)
    agent = arena.agent(f'cp {arena.agents}/"$CI_EVAL_TASK_ID".py calc.py\n')
    tasks = [*PROBES]
    result = arena.run("run", "-k", "1", "-j", "2", "--keep", "--agent-cmd", agent, *tasks,
                       check_canaries=False)
    listener.close()
    loot = {}
    for name in PROBES:
        files = list(arena.tmp.glob(f"ci-eval-run-*/{name}-r1-a1-*/workspace/loot.txt"))
        loot[name] = json.loads(files[0].read_text()) if files else {}
    yield result, arena, loot, listener
    for folder in arena.tmp.glob("ci-eval-run-*"):
        subprocess.run(["rm", "-rf", str(folder)], check=False)


def _secrets_in(arena, text: str) -> list[str]:
    return [name for name, value in arena.secrets.items() if value in text]


@needs_sandbox
def test_canaries_hold_after_the_checks_probes(probes):
    result, arena, _, _ = probes
    assert result.returncode == 0, result.detail()
    arena.check_canaries(result, keep=True)  # kept workspaces (loot.txt) scanned as well


@needs_sandbox
@pytest.mark.parametrize("task", sorted(PROBES))
def test_each_probe_ran_and_its_run_is_an_ordinary_fail(probes, task):
    """The probe ran (else the other tests prove nothing) and the run is what an honest agent
    with a wrong add() gets: fail, not error, not pass."""
    result, _, loot, _ = probes
    assert loot[task].get("ran") == "yes", (task, loot[task])
    record = result.by_task()[task]
    assert record["status"] == "fail" and record["attempt"] == 1, record
    assert record["retried_errors"] == []


@needs_sandbox
def test_code_under_test_finds_no_secret_in_any_environ(probes):
    _, arena, loot, _ = probes
    found = loot["task-001-environ"]
    assert not _secrets_in(arena, json.dumps(found)), "a harness secret was reachable"
    # its own PID namespace: the harness and the CLI are not even visible
    assert json.loads(found["pids"].replace("'", '"')) == [1, 2] or len(found["pids"]) < 40
    assert "CI_EVAL_CANARY_SECRET" not in found["env"]


@needs_sandbox
def test_code_under_test_reaches_no_host_socket_and_no_network(probes):
    _, _, loot, listener = probes
    found = loot["task-002-sockets"]
    assert listener.connections == [], f"checks code connected to {listener.connections}"
    for label in ("run", "tmp", "abstract", "tcp", "dns"):
        assert found[label].startswith("refused"), (label, found[label])
    assert "adv-" not in found["run-listing"]


@needs_sandbox
def test_code_under_test_cannot_read_this_or_any_tasks_solution(probes):
    _, arena, loot, _ = probes
    found = loot["task-003-solution"]
    assert arena.solution_canary not in json.dumps(found), found
    assert found["solution"] == "{}" and found["negatives"] == "{}", found
    assert found["other-task"].startswith("refused"), found
    assert found["escape"] in ("''", "")  # no way under the covers, even in a new user ns


@needs_sandbox
def test_code_under_test_writes_only_the_workspace(probes):
    _, arena, loot, _ = probes
    found = loot["task-004-writes"]
    for label in ("checks.py", "repo-state", "pth", "ci_eval", "results", "sysctl"):
        assert found[label].startswith("refused"), (label, found[label])
    # /tmp and HOME writes go to overlays that are discarded: nothing reached the host
    assert not list(Path(os.path.expanduser("~")).glob(f".adv-{arena.marker}"))
    task = arena.repo / "tasks" / "task-004-writes"
    assert "written by" not in (task / "checks.py").read_text()
    assert found["mount"] not in ("''", "") and "refused" not in found["mount"]  # mount failed


@needs_sandbox
def test_code_under_test_gets_no_descriptor_of_the_harness(probes):
    """Its descriptors are pytest's own (pipes to the checks process, capture files): none of
    the harness's files, and writing "pass" into every one of them forges nothing."""
    result, arena, loot, _ = probes
    found = loot["task-005-fds"]
    targets = eval(found["own"]).values()
    for target in targets:
        assert target == "/dev/null" or target.startswith(("pipe:", "/proc/", str(arena.tmp))), target
        assert not target.endswith((".jsonl", ".lock", ".log")), target
    record = result.by_task()["task-005-fds"]
    assert record["status"] == "fail" and "without a verdict" not in record["reason"], record
    # the checks process itself cannot be opened up either (it is not dumpable)
    assert found["parent"].startswith("refused"), found["parent"]


@needs_sandbox
def test_a_daemon_left_by_checks_code_dies_with_the_checks(probes):
    """It was to append forged pass lines to this invocation's and a later one's results."""
    result, arena, loot, _ = probes
    assert loot["task-006-daemon"]["forker"] == "'forked'", loot["task-006-daemon"]
    later = arena.repo / "later"
    arena.task("task-020-target")
    follow = arena.run("run", "-k", "1", "--agent", "noop", "--out", "later", "task-020-target",
                       out="later")
    assert follow.returncode == 0, follow.detail()
    time.sleep(1)  # the daemon wrote every 0.2 s
    assert [r["status"] for r in follow.records()] == ["fail"]
    assert len((later / "task-020-target.jsonl").read_text().splitlines()) == 1
    own = result.out / "task-006-daemon.jsonl"
    assert len(own.read_text().splitlines()) == 1
    assert arena.survivors() == []


# --- separate invocations ----------------------------------------------------------------------


@needs_sandbox
def test_a_daemon_from_one_check_step_cannot_rig_a_later_step(arena):
    """Checks with two pytest sessions (pass_to_pass, then fail_to_pass): the agent's code,
    imported by the first, leaves a daemon that rewrites the fail_to_pass test after the second
    session's restore. Defence: ci_eval.checks ends every process a step left behind before the
    next step starts."""
    checks = ('from ci_eval.checks import main, run_tests\n'
              'main(lambda: run_tests(pass_to_pass=["tests/test_old.py::test_sub"], restore=["tests/"]),\n'
              '     lambda: run_tests(fail_to_pass=["tests/test_new.py::test_add"], restore=["tests/"]))\n')
    arena.calc_task(checks=checks, files={
        "calc.py": "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
        "tests/test_new.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
        "tests/test_old.py": "from calc import sub\n\n\ndef test_sub():\n    assert sub(2, 2) == 0\n"})
    rigger = arena.file("calc.py", f'''import os, time
def add(a, b):
    return a - b
def sub(a, b):
    return a - b
if os.environ.get("CI_EVAL_REPORT_DIR") and not os.path.exists("/tmp/.rigged"):
    open("/tmp/.rigged", "w").close()
    if os.fork() == 0:
        os.setsid()
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)
        if os.fork() == 0:
            os.execvp("python3", ["python3", "-c", """
import os, time, sys
fake = "def test_add():\\\\n    pass\\\\n"
end = time.time() + 20
while time.time() < end:
    try:
        with open("tests/test_new.py") as f:
            if f.read() != fake:
                with open("tests/.t", "w") as g:
                    g.write(fake)
                os.replace("tests/.t", "tests/test_new.py")
    except OSError:
        pass
    time.sleep(0.0005)
""", "{arena.marker}"])
        os._exit(0)
''')
    agent = arena.agent(f"cp {rigger} calc.py\n")
    result = arena.run("run", "-k", "2", "-j", "2", "--agent-cmd", agent)
    assert result.returncode == 0, result.detail()
    records = result.records()
    assert [r["status"] for r in records] == ["fail", "fail"], records
    assert all("test_add FAILED" in r["reason"] for r in records), records
    # and the honest fix passes the same checks
    honest = arena.agent(f"printf '{GOOD_CALC}def sub(a, b):\\n    return a - b\\n' > calc.py\n")
    fixed = arena.run("run", "-k", "1", "--out", "honest", "--agent-cmd", honest, out="honest")
    assert fixed.record()["status"] == "pass", fixed.record()


@needs_sandbox
@pytest.mark.parametrize("layout", ["repository", "worktree"])
def test_the_git_repository_around_the_tasks_stays_hidden(arena, layout):
    """ci-eval in a subfolder of a repository (`--root evals`), or in a worktree of it:
    actions/checkout leaves the token in .git/config (http.extraheader), and the history holds
    every solution. Defence: views.enclosing_git_dirs are hidden too."""
    main = arena.repo / "project"
    main.mkdir()
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    (main / "README.md").write_text("the project\n")
    subprocess.run([*git, "-C", str(main), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-qm", "init"], check=True)
    checkout = main
    if layout == "worktree":
        checkout = arena.repo / "wt"
        subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(checkout)], check=True)
    token = arena.secrets["CHECKOUT_TOKEN"] = "ghs_" + os.urandom(16).hex()
    config = main / ".git" / "config"
    arena.secret_files.add(config)
    # the token is written the way actions/checkout persists it; ci-eval is never given it
    with open(config, "a") as handle:
        handle.write(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {token}\n')
    evals = checkout / "evals"
    (evals / "tasks").mkdir(parents=True)
    arena.task()
    (arena.repo / "tasks" / "task-001-greet").rename(evals / "tasks" / "task-001-greet")
    agent = arena.agent(f"cat {config} {main}/.git/HEAD > loot.txt 2>&1\n"
                        f"cat {checkout}/.git >> loot.txt 2>&1\n"
                        f"ls -a {main} {main}/.git >> loot.txt 2>&1; true\n")
    result = arena.run("run", "-k", "1", "--root", str(evals), "--agent-cmd", agent,
                       out=str(evals / "results"))
    record = result.record()
    assert record["status"] == "fail", record
    assert "loot.txt" in record["diff"]  # the agent did look
    assert "extraheader" not in record["diff"] and "ref: refs/heads" not in record["diff"]


@needs_sandbox
@pytest.mark.xfail(strict=True, reason="documented limit (docs/isolation.md, Limits): only /run "
                   "is hidden from the checks; a host Unix socket elsewhere (/var/lib/...) is "
                   "reachable, a read-only mount does not stop connect()")
def test_limit_a_host_socket_outside_run_and_tmp_is_reachable_from_the_checks(arena):
    path = Path(f"/var/lib/adv-{arena.marker}.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.1)
    connected = []

    def serve():
        end = time.monotonic() + 60
        while time.monotonic() < end and not connected:
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            connected.append(conn.recv(16))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    probe = arena.file("sock_calc.py", f"""import socket
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect({str(path)!r})
    s.sendall(b"checks")
except OSError:
    pass
def add(a, b):
    return a - b
""")
    try:
        arena.calc_task()
        result = arena.run("run", "-k", "1", "--agent-cmd", arena.agent(f"cp {probe} calc.py\n"))
        assert result.record()["status"] == "fail"
        time.sleep(0.5)
    finally:
        if not connected:
            connected.append(None)  # ends the server thread
        thread.join()
        server.close()
        path.unlink(missing_ok=True)
    assert connected == [None], f"checks code connected to {path}"
