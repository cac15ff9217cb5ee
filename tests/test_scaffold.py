"""`ci-eval init`'s generation in process (scaffold/files.init_repo): every file planned and
written, the example task only where tasks/ holds none, a clash or a folder in the way refused
before anything is written, the next steps returned for the command to print."""

from __future__ import annotations

import pytest

from ci_eval.errors import UserError
from ci_eval.scaffold import EXAMPLE_TASK, WORKFLOWS
from ci_eval.scaffold.files import InitRequest, init_repo


def test_init_writes_the_config_the_baseline_the_workflows_and_the_example(tmp_path):
    outcome = init_repo(InitRequest(root=str(tmp_path), default_branch="trunk"))
    written = {str(p.relative_to(tmp_path)) for p in outcome.written}
    assert {"ci-eval.yaml", "baseline.json",
            *(f".github/workflows/{name}" for name in WORKFLOWS)} <= written
    assert f"tasks/{EXAMPLE_TASK}/prompt.md" in written and outcome.example_added
    assert all(p.is_file() for p in outcome.written)
    assert (tmp_path / "tasks" / EXAMPLE_TASK / "solution" / "solve.sh").stat().st_mode & 0o111
    assert "branches: [trunk]" in (tmp_path / ".github/workflows/eval.yml").read_text()
    assert outcome.existing_tasks == 0 and "Next steps:" in outcome.next_steps


def test_a_second_init_is_refused_whole_and_force_rewrites(tmp_path):
    init_repo(InitRequest(root=str(tmp_path)))
    (tmp_path / "ci-eval.yaml").write_text("# mine\n")
    with pytest.raises(UserError, match="would overwrite"):
        init_repo(InitRequest(root=str(tmp_path)))
    assert (tmp_path / "ci-eval.yaml").read_text() == "# mine\n"
    again = init_repo(InitRequest(root=str(tmp_path), force=True))
    assert "default_agent" in (tmp_path / "ci-eval.yaml").read_text()
    assert again.existing_tasks == 1 and again.example_added  # --force renews the example


def test_a_file_where_a_folder_goes_is_refused_before_any_write(tmp_path):
    (tmp_path / ".github").write_text("not a folder\n")
    with pytest.raises(UserError, match="is a file") as raised:
        init_repo(InitRequest(root=str(tmp_path)))
    assert raised.value.path == tmp_path / ".github"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".github"]


def test_existing_tasks_get_no_example(tmp_path, make_task):
    make_task(tmp_path, "task-007-own")
    outcome = init_repo(InitRequest(root=str(tmp_path)))
    assert outcome.existing_tasks == 1 and not outcome.example_added
    assert not (tmp_path / "tasks" / EXAMPLE_TASK).exists()
