"""The docker runner against hostile containers (issue 31 items 3, 4, 12) and as Harbor runs its
tasks (issue 36 items 2, 3, 6), on a real engine through the real CLI:

- test.sh's code replaces /logs/verifier by a link to a host folder holding reward 1: not read;
- one check step's code leaves a .pth in the image's site-packages for the next step's pytest:
  the checks container's root filesystem is read-only, so it cannot;
- a 1 GiB sparse file in the image's WORKDIR: the copy-out is streamed and capped (an error
  naming the task, the harness's memory stays small);
- a Harbor task whose environment/ holds an executable its Dockerfile runs, whose solve.sh is an
  awk program (run by its #! line, not by /bin/sh) calling /solution/helper, and whose test.sh
  writes a multi-key reward.json: verifies, reference passes, noop fails.
The engine and images: tests/docker_helpers.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from docker_helpers import BUSYBOX, PYTHON, busybox_image, docker_engine, python_image  # noqa: F401
from harness_helpers import write_task

from tests.test_docker_isolation import harbor_task, one_run


def test_a_linked_verifier_folder_is_not_read(tmp_path, cli, busybox_image):  # noqa: F811
    host = tmp_path / "host-folder"
    host.mkdir()
    (host / "reward.txt").write_text("1\n")
    (host / "reward.json").write_text('{"reward": 1}')
    for how in (f"rm -rf /logs/verifier && ln -s {host} /logs/verifier",
                f"ln -s {host}/reward.txt /logs/verifier/reward.txt"):
        root = tmp_path / f"root-{len(how)}"
        harbor_task(root, f"#!/bin/sh\n{how}\n")
        record = one_run(root, cli, "--agent", "noop")
        assert record["status"] == "fail", record
        assert "is a symlink (not followed)" in record["reason"], record["reason"]


PTH_WRITER = (
    "import glob, sys\n"
    "fake = ('import sys, types; m = types.ModuleType(\"calc\"); m.add = lambda a, b: a + b; '\n"
    "        'sys.modules[\"calc\"] = m\\n')\n"
    "for folder in glob.glob('/usr/lib/python3*/*-packages') + glob.glob('/usr/local/lib/python3*/*-packages'):\n"
    "    try:\n"
    "        open(folder + '/zz-flip.pth', 'w').write(fake)\n"
    "        print('WROTE', folder)\n"
    "    except OSError as exc:\n"
    "        print('REFUSED', folder, exc.strerror)\n")
STEPS = ("from ci_eval.checks import main, run_tests, shell_exit_zero\n\n"
         "main(shell_exit_zero(['python3', 'setup_data.py'], timeout=60),\n"
         "     lambda: run_tests(['tests/test_calc.py::test_add']))\n")


def test_one_check_step_cannot_leave_a_loader_for_the_next(tmp_path, cli, python_image):  # noqa: F811
    """Step 1 runs the agent's setup_data.py (exit 0 whatever it does); step 2 runs the tests
    on the agent's wrong calc.py. A .pth in site-packages would swap in a right calc."""
    write_task(tmp_path, checks=STEPS, metadata={"runner": "docker", "docker": {}}, extra={
        "environment/Dockerfile": f"FROM {PYTHON}\n",
        "repo-state/calc.py": "def add(a, b):\n    return a - b\n",
        "repo-state/tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
                                         "    assert add(2, 3) == 5\n"})
    agent = f"cat > setup_data.py <<'EOF'\n{PTH_WRITER}EOF\n"
    result = cli("run", "--root", tmp_path, "-k", "1", "--agent-cmd", agent, timeout=300)
    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "results" / "task-001-greet.jsonl").read_text())
    assert record["status"] == "fail", record
    assert "test_add" in record["reason"], record["reason"]


PEAK_RSS_OF = ("import resource, subprocess, sys\n"
               "done = subprocess.run(sys.argv[2:], check=False)\n"
               "with open(sys.argv[1], 'w') as out:\n"
               "    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
               "sys.exit(done.returncode)\n")


def test_a_huge_sparse_workdir_is_refused_in_bounded_memory(tmp_path, cli, busybox_image):  # noqa: F811
    task = harbor_task(tmp_path, "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n",
                       docker={"workspace": "image"})
    shutil.rmtree(task / "repo-state")
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {BUSYBOX}\nWORKDIR /app\nRUN truncate -s 1G /app/sparse.bin\n")
    # The peak of the CLI and its children alone: this worker's own RUSAGE_CHILDREN also holds
    # every child an earlier test of the worker waited for (a real agent CLI, mmdebstrap).
    peak_file = tmp_path / "peak-rss-kib"
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS_OF, str(peak_file), sys.executable,
                           "-m", "ci_eval", "verify", "--root", str(tmp_path),
                           "--runner", "docker"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
                          check=False)
    peak_kib = int(peak_file.read_text())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "task-001-probe" in last and "more than 512 MiB" in last, proc.stderr
    assert "Traceback" not in proc.stderr
    print(f"peak RSS of the CLI and its children: {peak_kib // 1024} MiB")
    assert peak_kib < 400 * 1024, f"peak RSS {peak_kib} KiB"


HARBOR_TOOL = "#!/bin/sh\nmkdir -p /opt && echo built-by-tool > /opt/tool-ran\n"
# awk, not sh: run by /bin/sh this is a syntax error; /solution/helper only exists there
SOLVE_AWK = ('#!/bin/awk -f\nBEGIN { system("sh /solution/helper"); '
             'print "13" > "answer.txt" }\n')
MULTI_REWARD_TEST = (
    "#!/bin/sh\nc=0; p=0\n"
    "[ \"$(cat /app/answer.txt 2>/dev/null)\" = 13 ] && c=1\n"
    "[ -f /app/helper-ran ] && [ -f /opt/tool-ran ] && p=1\n"
    "printf '{\"correctness\": %s, \"performance\": %s}' $c $p > /logs/verifier/reward.json\n")


def test_a_harbor_task_runs_as_harbor_runs_it(tmp_path, cli, busybox_image):  # noqa: F811
    source = tmp_path / "source" / "awk-answer"
    for folder in ("environment", "tests", "solution"):
        (source / folder).mkdir(parents=True)
    (source / "instruction.md").write_text("Write 13 to /app/answer.txt.\n")
    (source / "task.toml").write_text('version = "1.0"\n[environment]\nmemory = "256M"\n'
                                      "allow_internet = true\n")
    (source / "environment" / "Dockerfile").write_text(
        f"FROM {BUSYBOX}\nCOPY tool /usr/local/bin/tool\nRUN [\"/usr/local/bin/tool\"]\n"
        "WORKDIR /app\n")
    (source / "environment" / "tool").write_text(HARBOR_TOOL)
    (source / "environment" / "tool").chmod(0o4755)  # setuid is never kept
    (source / "solution" / "solve.sh").write_text(SOLVE_AWK)
    (source / "solution" / "helper").write_text("touch /app/helper-ran\n")
    (source / "tests" / "test.sh").write_text(MULTI_REWARD_TEST)
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    imported = cli("import", "harbor", source.parent, "--into", root, "--json")
    assert imported.returncode == 0, imported.stderr
    [item] = json.loads(imported.stdout)["imported"]
    assert any("[environment].allow_internet" in w for w in item["warnings"]), item
    folder = root / "tasks" / item["task"]
    assert (folder / "environment" / "tool").stat().st_mode & 0o7777 == 0o755
    assert json.loads((folder / "metadata.json").read_text())["docker"]["memory_mb"] == 256
    verified = cli("verify", "--root", root, "--runner", "docker", "--json", timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert json.loads(verified.stdout)["tasks"][0]["valid"], verified.stdout
    passed = cli("run", "--root", root, "--agent", "reference", "-k", "1", timeout=300)
    assert passed.returncode == 0, passed.stderr
    [record] = [json.loads(line) for line in
                (root / "results" / f"{item['task']}.jsonl").read_text().splitlines()]
    assert record["status"] == "pass", record["reason"]
    assert "correctness 1, performance 1" in record["reason"], record["reason"]


def test_a_task_that_adds_a_user_gets_the_capabilities_back(tmp_path, cli, busybox_image):  # noqa: F811
    """Harbor's containers keep the engine's default capabilities; ci-eval drops all and the
    import gives back the few a task's scripts need to change users and owners."""
    source = tmp_path / "source" / "add-a-user"
    for folder in ("environment", "tests", "solution"):
        (source / folder).mkdir(parents=True)
    (source / "instruction.md").write_text("Make /app/owned.txt owned by uid 1000.\n")
    (source / "task.toml").write_text('version = "1.0"\n')
    (source / "environment" / "Dockerfile").write_text(f"FROM {BUSYBOX}\nWORKDIR /app\n")
    (source / "solution" / "solve.sh").write_text(  # busybox-static has no adduser applet
        "#!/bin/sh\nset -e\necho hi > /app/owned.txt\nchown 1000:1000 /app/owned.txt\n")
    (source / "tests" / "test.sh").write_text(
        "#!/bin/sh\nif [ \"$(stat -c %u /app/owned.txt 2>/dev/null)\" = 1000 ]; then r=1; "
        "else r=0; fi\necho $r > /logs/verifier/reward.txt\n")
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    imported = cli("import", "harbor", source, "--into", root, "--json")
    assert imported.returncode == 0, imported.stderr
    [item] = json.loads(imported.stdout)["imported"]
    metadata = json.loads((root / "tasks" / item["task"] / "metadata.json").read_text())
    assert metadata["docker"]["capabilities"] == ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID",
                                                  "SETGID"]
    verified = cli("verify", "--root", root, "--runner", "docker", timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    del metadata["docker"]["capabilities"]  # every capability dropped: chown is refused
    (root / "tasks" / item["task"] / "metadata.json").write_text(json.dumps(metadata))
    dropped = cli("verify", "--root", root, "--runner", "docker", timeout=300)
    assert dropped.returncode == 1 and "Operation not permitted" in dropped.stdout, dropped.stdout


def test_a_harbor_image_s_entrypoint_runs_before_the_scripts(tmp_path, cli, busybox_image):  # noqa: F811
    """dns-blacklisting's pattern: the entrypoint sets the machine up, then `exec "$@"`."""
    task = harbor_task(tmp_path, "#!/bin/sh\nr=0\n[ -f /etc/entry-ran ] && [ -f solved ] && r=1\n"
                                 "echo $r > /logs/verifier/reward.txt\n")
    (task / "environment" / "entry").write_text(
        "#!/bin/sh\necho ready > /etc/entry-ran\nexec \"$@\"\n")
    (task / "environment" / "entry").chmod(0o755)
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {BUSYBOX}\nCOPY entry /entry\nENTRYPOINT [\"/entry\"]\n")
    (task / "solution" / "solve.sh").write_text(
        "#!/bin/sh\n[ -f /etc/entry-ran ] && touch solved\n")
    verified = cli("verify", "--root", tmp_path, "--runner", "docker", timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_an_entrypoint_serving_in_the_foreground_is_exec_d_into(tmp_path, cli, busybox_image):  # noqa: F811
    """An ENTRYPOINT script that runs a server and never its arguments (busybox httpd on port
    80, a low port with no capability): as in Harbor, the container stays up running it and the
    scripts are exec'd beside it; solve.sh fetches from it, untouched the reward is 0."""
    task = harbor_task(tmp_path, "#!/bin/sh\nr=0\n[ \"$(cat answer.txt)\" = 42 ] && r=1\n"
                                 "echo $r > /logs/verifier/reward.txt\n")
    (task / "environment" / "www").mkdir()
    (task / "environment" / "www" / "answer").write_text("42\n")
    (task / "environment" / "serve").write_text("#!/bin/sh\nexec httpd -f -p 80 -h /www\n")
    (task / "environment" / "serve").chmod(0o755)
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {BUSYBOX}\nCOPY www /www\nCOPY serve /serve\nENTRYPOINT [\"/serve\"]\n")
    (task / "solution" / "solve.sh").write_text(
        "#!/bin/sh\nwget -q -O answer.txt http://127.0.0.1:80/answer\n")
    verified = cli("verify", "--root", tmp_path, "--runner", "docker", "--json", timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
