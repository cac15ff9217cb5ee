"""Round 3 of the sandbox classes (issue #18, items 8-11): signals, /tmp under HOME, PATH
folders the checks cannot see, and the host's HOME.

Each attack goes through `ci-eval run` for real and is compared with an honest twin:
- signals: an agent (and code under test) that signals its process group, every process it may
  (-1), its parent and every group number: nothing of the harness stops or dies, the run ends
  at once with the twin's status;
- HOME=/tmp and HOME=/tmp/x (CI containers): the agent and the checks can still write /tmp;
- a `requires` tool on a PATH folder under the repo root: exit 2 before any run, naming the
  tool, the folder and the fix; the harness's own venv inside the repo root (.ci/run's .venv)
  keeps working;
- the host's HOME: a canary there is unreadable by the agent and by the checks; a preset's
  login file is in the agent's own HOME, nothing else of the host's.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

from .conftest import GOOD_CALC, needs_sandbox

SIGNALLER = r'''
import os, signal, sys, time
me = os.getpid()
ready_r, ready_w = os.pipe()
helper = os.fork()
if helper == 0:  # another group: wakes the agent after each attack that stops its own group
    os.setpgid(0, 0)
    os.write(ready_w, b"r")
    for _ in range(100):
        time.sleep(0.02)
        try:
            os.kill(me, signal.SIGCONT)
        except OSError:
            pass
    os._exit(0)
os.read(ready_r, 1)
reached = []
attacks = [(0, signal.SIGSTOP), (-1, signal.SIGSTOP), (os.getppid(), signal.SIGSTOP),
           (-os.getpgrp() if os.getpgrp() else 0, signal.SIGSTOP), (0, signal.SIGTERM),
           (0, signal.SIGINT), (0, signal.SIGHUP)]
attacks += [(-group, signal.SIGSTOP) for group in range(2, 300)]
attacks += [(0, signal.SIGKILL), (-1, signal.SIGKILL), (os.getppid(), signal.SIGKILL)]
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)  # survive its own group's signals
for target, sig in attacks:
    try:
        os.kill(target, sig)
        reached.append(f"{target}:{sig}")
    except OSError:
        pass
    time.sleep(0.001)
print("signalled", len(reached), "targets", flush=True)
with open("greet.txt", "w") as handle:
    handle.write("hello\n")
'''


def _twins(arena, honest_agent: str, hostile_agent: str, **run):
    """The honest run and the attack, each into its own results folder."""
    honest = arena.run("run", "-k", "1", "--agent-cmd", honest_agent, "--out", "honest",
                       out="honest", **run)
    attacked = arena.run("run", "-k", "1", "--agent-cmd", hostile_agent, "--out", "attacked",
                         out="attacked", timeout=50, **run)
    assert honest.returncode == 0, honest.detail()
    return honest, attacked


def _states_of_stopped(marker: str) -> list[str]:
    """Processes in state T (stopped) whose command line or environment holds marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            text = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if state in ("T", "t") and marker.encode() in text:
            found.append(entry.name)
    return found


@needs_sandbox
def test_an_agent_signalling_every_group_it_can_name_stops_nothing_of_the_harness(arena):
    arena.task(metadata={"timeout_seconds": {"agent": 60, "checks": 60}})
    # Run as argv (no shell): the attacker is the namespace's PID 1, as an agent binary is.
    honest, result = _twins(arena, arena.agent("echo hello > greet.txt\n"),
                            arena.agent(SIGNALLER, shell="python"))
    assert result.returncode == 0, result.detail()
    assert result.record()["status"] == honest.record()["status"] == "pass", result.record()
    assert result.seconds < 20, f"the run stalled ({result.seconds:.1f}s of a 60s agent timeout)"
    assert not _states_of_stopped(str(arena.tmp))


CHECKS_SIGNALLER = (
    "import os, signal, time\n"
    "_me = os.getpid()\n"
    "_ready = os.pipe()\n"
    "if os.fork() == 0:\n"
    "    os.setpgid(0, 0)\n"
    "    os.write(_ready[1], b'r')\n"
    "    for _ in range(50):\n"
    "        time.sleep(0.02)\n"
    "        try:\n"
    "            os.kill(_me, signal.SIGCONT)\n"
    "        except OSError:\n"
    "            pass\n"
    "    os._exit(0)\n"
    "os.read(_ready[0], 1)\n"
    "for _sig in (signal.SIGTERM, signal.SIGHUP):\n"
    "    signal.signal(_sig, signal.SIG_IGN)\n"
    "for _target, _sig in [(0, signal.SIGSTOP), (os.getppid(), signal.SIGSTOP),\n"
    "                      (0, signal.SIGTERM), (-1, signal.SIGTERM), (-1, signal.SIGSTOP)]:\n"
    "    try:\n"
    "        os.kill(_target, _sig)\n"
    "    except OSError:\n"
    "        pass\n"
    "    time.sleep(0.05)\n"
)


@needs_sandbox
def test_code_under_test_signalling_its_groups_stops_nothing_of_the_harness(arena):
    """The checks' side: the module pytest imports signals whatever it can name."""
    arena.calc_task(metadata={"timeout_seconds": {"agent": 60, "checks": 60}})
    good = arena.file("calc_good.py", GOOD_CALC)
    hostile = arena.file("calc_hostile.py", CHECKS_SIGNALLER + GOOD_CALC)
    honest, result = _twins(arena, arena.agent(f"cp {good} calc.py\n"),
                            arena.agent(f"cp {hostile} calc.py\n"))
    assert honest.record()["status"] == "pass", honest.record()
    assert result.record()["status"] == "pass", result.record()
    assert result.seconds < 25, f"the run stalled ({result.seconds:.1f}s of a 60s timeout)"
    assert not _states_of_stopped(str(arena.tmp))


# --- /tmp whatever HOME is (item 9) ------------------------------------------------------------

TMP_CHECKS = '''import os
from ci_eval.checks import failed, file_equals, main, passed, shell_exit_zero


def writable(folder):
    def check():
        path = os.path.join(folder, f"adv-check-{os.getpid()}")
        try:
            with open(path, "w") as handle:
                handle.write("x")
            os.unlink(path)
        except OSError as exc:
            return failed(f"{folder} is not writable for the checks: {exc}")
        return passed()
    return check


main(file_equals("greet.txt", "hello\\n"), writable("/tmp"), writable(os.environ["HOME"]),
     shell_exit_zero("f=$(mktemp) && rm $f"))
'''
TMP_AGENT = ('set -e\n'
             'echo x > /tmp/adv-agent-$$ && rm /tmp/adv-agent-$$\n'
             'echo x > "$HOME/adv-agent-$$" && rm "$HOME/adv-agent-$$"\n'
             'f=$(mktemp) && rm "$f"\n'
             'echo hello > greet.txt\n')


@needs_sandbox
@pytest.mark.parametrize("mode", ["run", "host"])
def test_tmp_stays_writable_for_agent_and_checks_when_home_is_under_tmp(arena, mode):
    """CI containers set HOME=/tmp: /tmp (and HOME) stay writable for the agent and the checks,
    with HOME=/tmp and HOME=/tmp/x, with a HOME of the run's own and with `home: host`."""
    arena.task(checks=TMP_CHECKS)
    agent = arena.agent(TMP_AGENT)
    (arena.repo / "ci-eval.yaml").write_text(
        f"agents:\n  a:\n    command: {agent}\n    home: {mode}\nchecks:\n  home: {mode}\n")
    nested = Path("/tmp") / f"adv-home-{uuid.uuid4().hex[:12]}"  # not the marker: no PWNED
    nested.mkdir()
    try:
        statuses = {}
        for home in ("/tmp", str(nested)):
            out = f"out-{len(statuses)}"
            # the harness's own cache (docs/isolation.md) kept out of the HOME under test
            result = arena.run("run", "-k", "1", "--agent", "a", "--out", out, out=out,
                               env={"HOME": home, "XDG_CACHE_HOME": str(arena.base / "cache")})
            assert result.returncode == 0, result.detail()
            statuses[home] = (result.record()["status"], result.record()["reason"])
        assert statuses == {"/tmp": ("pass", "checks passed"),
                            str(nested): ("pass", "checks passed")}, statuses
        assert list(nested.iterdir()) == []  # HOME writes of `home: host` were discarded
    finally:
        nested.rmdir()


# --- the host's HOME (item 11) -----------------------------------------------------------------

FAKE_BIN = Path(__file__).resolve().parents[1] / "fake_clis" / "bin"
LOGIN = '{"claudeAiOauth": {"accessToken": "%s"}}\n'


def _host_home(arena) -> tuple[Path, str]:
    """A HOME for `ci-eval run` holding credential files; the canary secret in them."""
    home = arena.base / "host-home"
    canary = "ghp_" + uuid.uuid4().hex
    files = {".git-credentials": f"https://x:{canary}@github.com\n",
             ".config/gh/hosts.yml": f"github.com:\n  oauth_token: {canary}\n",
             ".claude/.credentials.json": LOGIN % ("login-" + uuid.uuid4().hex)}
    for relative, text in files.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(text)
        arena.secret_files.add(home / relative)
    arena.secrets["HOST_HOME_CANARY"] = canary  # must reach no output and no other file
    return home, canary


LOOTER = '''host="$1"
loot=$(cat "$host/.git-credentials" "$host/.config/gh/hosts.yml" 2>/dev/null; \
       find "$host" -type f 2>/dev/null)
if [ -n "$loot" ]; then echo "$loot" > loot.txt; echo bye > greet.txt; exit 0; fi
echo hello > greet.txt
'''


@needs_sandbox
def test_the_host_home_and_its_credentials_are_unreadable_by_the_agent(arena):
    home, _ = _host_home(arena)
    arena.task()
    looter = arena.agent(LOOTER).replace(arena.marker, f"{home} {arena.marker}")
    honest, result = _twins(arena, arena.agent("echo hello > greet.txt\n"), looter,
                            env={"HOME": str(home)})
    assert honest.record()["status"] == result.record()["status"] == "pass", result.record()
    assert "loot.txt" not in result.record().get("diff", "")


CALC_LOOTER = '''import os
_loot = ""
for _name in (".git-credentials", ".config/gh/hosts.yml"):
    try:
        _loot += open(os.path.join(%r, _name)).read()
    except OSError:
        pass


def add(a, b):
    assert not _loot, "LOOT " + _loot  # into the failing test's message, the record's reason
    return a + b
'''


@needs_sandbox
def test_the_host_home_is_unreadable_by_code_under_test(arena):
    home, _ = _host_home(arena)
    arena.calc_task()
    good = arena.file("calc_good.py", GOOD_CALC)
    hostile = arena.file("calc_looter.py", CALC_LOOTER % str(home))
    honest, result = _twins(arena, arena.agent(f"cp {good} calc.py\n"),
                            arena.agent(f"cp {hostile} calc.py\n"), env={"HOME": str(home)})
    assert honest.record()["status"] == result.record()["status"] == "pass", result.record()


FAKE_CLAUDE = '''#!/bin/bash
# a claude that looks around before doing its job: its HOME holds the login, nothing else
[ "$(cat "$HOME/.claude/.credentials.json")" = '%s' ] || { echo "no login copy" >&2; exit 3; }
[ "$(cd "$HOME" && find . -mindepth 1 | sort | tr '\\n' ' ')" = "./.claude ./.claude/.credentials.json " ] \
  || { echo "more than the login in HOME: $(ls -A "$HOME")" >&2; exit 4; }
[ "$HOME" != '%s' ] || { echo "the host HOME" >&2; exit 5; }
cat '%s/.git-credentials' 2>/dev/null && exit 6
export FAKE_AGENT_FILE=greet.txt FAKE_AGENT_CONTENT=$'hello\\n'
exec '%s/claude' "$@"
'''


@needs_sandbox
def test_a_preset_gets_its_login_file_in_a_home_of_its_own_and_nothing_else(arena):
    """`claude login` on the host: the agent's own HOME holds a copy of the login file, not the
    host's other files; with `home: host` the host's HOME is the agent's (readable)."""
    home, _ = _host_home(arena)
    arena.task()
    login = (home / ".claude" / ".credentials.json").read_text().rstrip("\n")
    bin_dir = arena.agents / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(FAKE_CLAUDE % (login, home, home, FAKE_BIN))
    claude.chmod(0o755)
    env = {"HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "ANTHROPIC_API_KEY": ""}  # logged in with `claude login`, no key
    result = arena.run("run", "-k", "1", "--agent", "claude-code", env=env)
    assert result.returncode == 0, result.detail()
    assert result.record()["status"] == "pass", result.record()

    (arena.repo / "ci-eval.yaml").write_text(
        "agents:\n  shared:\n    command: bash -c 'test -r \"$HOME/.git-credentials\" && "
        f"[ \"$HOME\" = \"{home}\" ] && echo hello > greet.txt'\n    home: host\n")
    shared = arena.run("run", "-k", "1", "--agent", "shared", "--out", "shared", out="shared",
                       env={"HOME": str(home)})
    assert shared.record()["status"] == "pass", shared.record()  # opted in: readable


# --- requires as the checks see them (item 10) -------------------------------------------------

def _tool(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def _venv_in_repo(arena) -> Path:
    """What .ci/run makes: a virtualenv inside the repo root that runs ci-eval (its packages
    here: this interpreter's, through a .pth folder line)."""
    import subprocess
    import sysconfig
    venv = arena.repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"]
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "host.pth").write_text(  # this checkout's ci_eval, this venv's packages
        f"{Path(__file__).resolve().parents[2]}\n{sysconfig.get_paths()['purelib']}\n")
    return venv


@needs_sandbox
def test_requires_are_resolved_as_the_checks_see_them(arena):
    """A `requires` tool in ./bin of the repo root passes a plain PATH lookup but is hidden
    from the checks: exit 2 before any run, naming it, its folder and the fix. The honest
    twins: the same tool outside the repo root, and the venv inside the repo root that runs
    ci-eval (.ci/run's .venv: its bin/ and site-packages stay readable for the checks)."""
    venv = _venv_in_repo(arena)
    token = uuid.uuid4().hex[:8]
    in_venv = _tool(venv / "bin", f"adv-venv-tool-{token}").name
    outside = _tool(arena.agents / "bin", f"adv-outside-tool-{token}").name
    hidden = _tool(arena.repo / "bin", f"adv-repo-tool-{token}")
    uses = (f'main(lambda: run_tests(fail_to_pass=["tests/test_calc.py::test_add"], '
            f'restore=["tests/"]), shell_exit_zero("{in_venv}"), shell_exit_zero("{outside}"))\n')
    arena.calc_task(checks="from ci_eval.checks import main, run_tests, shell_exit_zero\n" + uses,
                    metadata={"requires": ["pytest", in_venv, outside]})
    launcher = arena.agents / "venv_ci_eval.py"  # `.venv/bin/python -m ci_eval ARGS`
    launcher.write_text("import runpy, sys\nsys.argv = ['ci_eval', *sys.argv[4:]]\n"
                        "runpy.run_module('ci_eval', run_name='__main__')\n")
    env = {"PATH": os.pathsep.join([str(venv / "bin"), str(arena.agents / "bin"),
                                    str(hidden.parent), os.environ["PATH"]])}
    prefix = [str(venv / "bin" / "python"), str(launcher)]
    good = arena.file("calc_good.py", GOOD_CALC)
    ran = arena.run("run", "-k", "1", "--agent-cmd", arena.agent(f"cp {good} calc.py\n"),
                    env=env, prefix=prefix)
    assert ran.returncode == 0, ran.detail()
    assert ran.record()["status"] == "pass", ran.record()["reason"][-3000:]

    arena.calc_task("task-002-hidden-tool", checks=f"from ci_eval.checks import main, shell_exit_zero\n"
                    f"main(shell_exit_zero('{hidden.name}'))\n",
                    metadata={"requires": [hidden.name]})
    refused = arena.run("run", "-k", "1", "--agent", "reference", "task-002-hidden-tool",
                        "--out", "refused", out="refused", env=env, prefix=prefix)
    assert refused.returncode == 2, refused.detail()
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    for needle in (hidden.name, str(hidden), str(arena.repo.resolve()), "which the checks' sandbox hides",
                   "install it where the checks can see it", "no run started"):
        assert needle in line, (needle, line)
    assert not (arena.repo / "refused").exists() or not list((arena.repo / "refused").glob("*.jsonl"))
