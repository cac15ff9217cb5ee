"""Hostile sources for `ci-eval import` (issue 31, items 6 and 7): source text never becomes code
in the generated checks.py (an id, a test command, a path or a pattern that closes the docstring
or a string and adds a statement), and a SWE-bench test_patch's symlink never makes the importer
read a file outside the patch (a host file's text copied into the task folder)."""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
from pathlib import Path

from tests.test_import_swe_bench import instance
from tests.test_upstream_tasks import _git, upstream

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MARK = "/tmp/ci-eval-import-breakout"
# each closes a """ docstring, a '...' or a "..." literal, and calls open() at module level
PAYLOADS = [f'x"""; open({MARK!r}, "w").write("1"); """',
            f"x'''; open({MARK!r}, 'w'); '''",
            "x'); open('/tmp/m', 'w'); ('",
            'x"); open("/tmp/m", "w"); ("',
            "x\\\"\"\"\n\nopen('/tmp/m')\n\"\"\""]
# what a generated checks.py may call: the helpers and nothing else
HELPERS = {"main", "file_equals", "regex_match", "shell_exit_zero", "task_dir", "restore_from",
           "run_tests", "declared_tests", "run_declared_tests", "os.path.abspath", "' '.join"}


def assert_inert(checks: Path, payload: str) -> None:
    """checks.py parses, calls only the helpers, and holds the payload only inside literals."""
    tree = ast.parse(checks.read_text())
    called = {node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
              for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert called <= HELPERS, (called - HELPERS, checks.read_text())
    docstring = ast.get_docstring(tree) or ""
    assert "open(" not in docstring
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "open" not in names


def import_cli(cli, fmt, source, root, env=None):
    result = cli("import", fmt, source, "--json", cwd=root, env=env, timeout=120)
    return result


def test_fixture_json_fields_stay_data(cli, repo_root, tmp_path):
    for number, payload in enumerate(PAYLOADS):
        for verifier in ({"name": "regex_match", "args": {"path": f"a{payload}.py",
                                                            "pattern": re.escape(payload)}},
                         {"name": "shell_exit_zero", "args": {"argv": ["sh", "-c", payload]}},
                         {"name": "shell_exit_zero", "args": {"cmd": payload,
                                                              "timeout_seconds": "5"}}):
            src = tmp_path / f"src-{number}-{verifier['name']}-{len(verifier['args'])}"
            (src / "buggy").mkdir(parents=True)
            (src / "buggy" / "a.py").write_text("x = 1\n")
            (src / "task.json").write_text(json.dumps(
                {"id": payload + src.name, "goal": payload, "verifier": verifier}))
            result = import_cli(cli, "fixture-json", src, repo_root)
            assert result.returncode == 0, result.stderr
            [item] = json.loads(result.stdout)["imported"]
            assert_inert(repo_root / "tasks" / item["task"] / "checks.py", payload)


def test_task_yaml_id_and_test_command_stay_data(cli, repo_root, tmp_path):
    sample = FIXTURES / "task-yaml-sample" / "slugify-001-digits-and-hyphens"
    for number, payload in enumerate(PAYLOADS):
        src = tmp_path / f"src-{number}"
        shutil.copytree(sample, src)
        text = (src / "task.yaml").read_text()
        command = "python3 -m pytest -k " + json.dumps(payload)
        text = text.replace("id: slugify-001-digits-and-hyphens", f"id: {json.dumps(payload)}")
        text = text.replace("test_command: python3 -m pytest -q --no-header -p no:cacheprovider",
                            f"test_command: {json.dumps(command)}")
        text = text.replace("title: slugify", f"title: {json.dumps(payload)}\nx-title: slugify")
        (src / "task.yaml").write_text(text)
        result = import_cli(cli, "task-yaml", src, repo_root)
        assert result.returncode == 0, result.stderr
        [item] = json.loads(result.stdout)["imported"]
        checks = repo_root / "tasks" / item["task"] / "checks.py"
        assert_inert(checks, payload)
        assert shlex.split(command)[-1] in ast.literal_eval(ast.parse(checks.read_text()).body[-1].value
                                           .args[0].body.keywords[1].value)


def test_swe_bench_instance_id_and_paths_stay_data(cli, repo_root, tmp_path):
    url, base, _ = upstream(tmp_path)
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    lines = []
    for number, payload in enumerate(PAYLOADS[:4]):
        new_test = f"tests/test_{number}{payload.replace('/', '_')}.py"
        patch = (f"diff --git a/{new_test} b/{new_test}\nnew file mode 100644\n"
                 f"--- /dev/null\n+++ b/{new_test}\n@@ -0,0 +1 @@\n+def test_x(): pass\n")
        if any(c in new_test for c in "\"\\\t\n"):
            continue  # git quotes such names; the quoted form is tried by the id instead
        lines.append(json.dumps(instance(url, base, instance_id=payload + str(number),
                                         test_patch=patch)))
    source = tmp_path / "instances.jsonl"
    source.write_text("\n".join(lines) + "\n")
    result = import_cli(cli, "swe-bench", source, repo_root, env=env)
    assert result.returncode == 0, result.stderr
    imported = json.loads(result.stdout)["imported"]
    assert len(imported) == len(lines) >= 2
    for item in imported:
        assert_inert(repo_root / "tasks" / item["task"] / "checks.py", item["source_id"])


def symlink_patch(path: str, target: str) -> str:
    return (f"diff --git a/{path} b/{path}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n")


def test_swe_bench_symlinks_in_the_test_patch_are_refused(cli, repo_root, tmp_path):
    url, base, _ = upstream(tmp_path)
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-ONLY-TEXT\n")
    for number, target in enumerate([str(secret), "../../../../../../" + str(secret)[1:]]):
        source = tmp_path / f"link-{number}.jsonl"
        source.write_text(json.dumps(instance(url, base, test_patch=symlink_patch(
            "tests/leak.txt", target))) + "\n")
        result = import_cli(cli, "swe-bench", source, repo_root, env=env)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "tests/leak.txt" in result.stderr and "symbolic link" in result.stderr
        assert "Traceback" not in result.stderr
        assert list((repo_root / "tasks").iterdir()) == []


def test_swe_bench_a_symlink_in_the_base_commit_is_not_read(cli, repo_root, tmp_path):
    """The repository at base_commit holds tests/data -> a host file; the test patch edits it."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-ONLY-TEXT\n")
    url, base, _ = upstream(tmp_path)
    work = tmp_path / "upstream-work"
    _git("checkout", "-q", base, cwd=work)
    (work / "tests" / "data.txt").symlink_to(secret)
    _git("add", "-A", cwd=work)
    _git("commit", "-qm", "a link", cwd=work)
    linked = _git("rev-parse", "HEAD", cwd=work)
    _git("push", "-q", url[len("file://"):], "HEAD:refs/heads/linked", cwd=work)
    patch = ("diff --git a/tests/data.txt b/tests/data.txt\n--- a/tests/data.txt\n"
             "+++ b/tests/data.txt\n@@ -1 +1,2 @@\n HOST-ONLY-TEXT\n+more\n")
    source = tmp_path / "base-link.jsonl"
    source.write_text(json.dumps(instance(url, linked, test_patch=patch)) + "\n")
    result = import_cli(cli, "swe-bench", source, repo_root,
                        env={"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for path in (repo_root / "tasks").rglob("*"):
        assert not path.is_file() or b"HOST-ONLY-TEXT" not in path.read_bytes()
