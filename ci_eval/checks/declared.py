"""declared_tests: the tests a task declares in its metadata.json or rubric.yaml (apart from
task_folder.py, so that a checks.py that declares none never loads the rubric's reader)."""

from __future__ import annotations

from ci_eval import strict_json
from ci_eval.checks.task_folder import task_dir
from ci_eval.grading.rubric import RUBRIC_FILE, task_grading


def declared_tests() -> tuple[list[str], list[str]]:
    """The task's fail_to_pass and pass_to_pass ids, as its metadata.json or rubric.yaml
    declares them (ValueError when it declares none)."""
    folder = task_dir()
    metadata = strict_json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
    rubric = folder / RUBRIC_FILE
    tests, _ = task_grading(metadata, rubric.read_text(encoding="utf-8") if rubric.is_file()
                            else None, metadata_source=folder / "metadata.json",
                            rubric_source=rubric)
    if tests is None:
        raise ValueError(f"{folder.name} declares no fail_to_pass / pass_to_pass tests")
    return list(tests.fail_to_pass), list(tests.pass_to_pass)
