"""`ci-eval import fixture-json SRC`: fixture tasks (a task.json, buggy/, expected/) -> native tasks.

The source format: a task is a folder holding task.json

    {"id": "fizzbuzz-off-by-one", "goal": "the prompt given to the agent",
     "verifier": {"name": "regex_match", "args": {"path": "fizzbuzz.py", "pattern": "..."}}}

with buggy/ (the files the agent starts from) and, for file_equals, expected/ (the fixed files).
SRC is one such folder, a folder of them, or a folder of <id>.json files beside <id>/ folders
(a `tasks/` folder inside SRC is looked into too). Verifiers and their args, with the meaning the
original harness (main.py of the fixture-task lesson) gives them; files are read in Python's
text mode there, so \r\n and \r read as \n:

  file_equals      {path, normalize_trailing_newline?=true}  the workspace file equals
                   expected/<path>; normalized, both end in exactly one newline. The flag is read
                   as Python's bool(): the string "false" is true there, and here (warned).
  regex_match      {path, pattern}    re.search(pattern, the file's text, re.MULTILINE)
  shell_exit_zero  {argv, timeout_seconds?=10}  argv (a list, no shell) run in the workspace
                   exits 0 within the timeout; a missing program fails

Each becomes a task whose checks.py calls the ci_eval.checks helper with those semantics, so
every verdict is the one the original harness gives, its false positives and negatives included:
the report warns about the text verifiers and about every argument read differently from how it
looks. Arguments the original ignores are ignored (and warned about), `expected` among them:
file_equals always compares with expected/<path> there. One extension is kept from this
project's own samples: shell_exit_zero {cmd} (or {command}), run as `sh -c cmd`; the original
reads only `argv` and fails every candidate of such a task, which the report says. buggy/
becomes repo-state/; the solution is the patch from buggy/ to expected/ when expected/ exists
(as the original's reference candidate, it copies expected/ over buggy/ and deletes nothing),
else a placeholder solve.sh that `ci-eval validate` reports until someone writes one. A source
id that already starts with a task number (`task_001_fizzbuzz`) loses it: the folder is
task-NNN-fizzbuzz, not task-NNN-task-001-fizzbuzz.

Deliberate differences, for the trust model (docs/grading.md "fixture-json"): a symlinked or non-UTF-8 file
in the workspace fails the text verifiers here (the original follows the link or crashes), and
malformed arguments (a relative path that leaves the task, an invalid regex, an argv that is not
a non-empty list of strings) are refused with exit 2 instead of a task that fails every time.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ci_eval import strict_json
from ci_eval.errors import UserError
from ci_eval.importers.base import (
    IMPORTED_KEY,
    SOLUTION_PLACEHOLDER,
    Conversion,
    ImportedTask,
    Skipped,
    file_patch,
    kebab,
    metadata_json,
    read_tree,
)
from ci_eval.output import read_user_file
from ci_eval.strict_json import json_path

NAME = "fixture-json"
SUMMARY = "fixture tasks: task.json {id, goal, verifier {name, args}}, buggy/, expected/"
TASK_FILE = "task.json"
DEFAULT_TIMEOUT = 10
ARGS = {"file_equals": (("path",), ("normalize_trailing_newline",)),
        "regex_match": (("path", "pattern"), ()),
        "shell_exit_zero": ((), ("argv", "cmd", "timeout_seconds"))}
TASK_NUMBER_PREFIX = re.compile(r"task-\d+-")
TEXT_VERIFIERS = ("file_equals", "regex_match")


def convert(src: Path, *, today: dt.date, already: Mapping[str, str] = {}) -> Conversion:
    """Read every fixture task of `src` (see the module docstring); nothing is written."""
    result = Conversion()
    for task_file, folder in source_tasks(Path(src)):
        data = _task_json(task_file)
        if data["id"] in already:
            result.skipped.append(Skipped(data["id"], f"already imported as {already[data['id']]}"))
            continue
        name = data["verifier"]["name"]
        if name not in ARGS:
            result.skipped.append(Skipped(data["id"], f"verifier {name!r} has no ci-eval "
                                          f"equivalent (known: {', '.join(ARGS)})"))
            continue
        result.tasks.append(_task(data, task_file, folder, today))
    if any(t.warnings for t in result.tasks):
        result.warnings.append(
            "text verifiers (file_equals, regex_match) have false positives and false negatives: "
            "a correct fix written differently fails them, a wrong fix holding the expected text "
            "passes them. The imported checks keep the original verdicts; replace them with "
            "behaviour checks (run the code or its tests: ci_eval.checks.run_tests, "
            "shell_exit_zero) and give each task a second, differently written solution "
            "(tasks/README.md: 'Judge behaviour, not text').")
    return result


def source_tasks(src: Path) -> list[tuple[Path, Path]]:
    """(task.json, the task's folder) for every fixture task in src, sorted."""
    if not src.is_dir():
        raise UserError("no such folder (expected a fixture task or a folder of them)",
                        path=src, field="SRC")
    if (src / TASK_FILE).is_file():
        return [(src / TASK_FILE, src)]
    found = []
    for child in sorted(src.iterdir()):
        if child.is_dir() and (child / TASK_FILE).is_file():
            found.append((child / TASK_FILE, child))
        elif child.is_file() and child.suffix == ".json":
            found.append((child, src / child.stem))
    if not found and (src / "tasks").is_dir():
        return source_tasks(src / "tasks")
    if not found:
        raise UserError(f"no fixture tasks found (expected {TASK_FILE} in SRC or its folders, or "
                        "<id>.json files beside <id>/ folders)", path=src, field="SRC")
    return found


def _task_json(path: Path) -> dict:
    try:
        data = strict_json.loads(read_user_file(path).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except (json.JSONDecodeError, strict_json.StrictJSONError) as exc:
        raise UserError(f"invalid JSON: {exc}", path=path) from None
    if not isinstance(data, dict):
        raise UserError("expected an object {id, goal, verifier}", path=path)
    for key in ("id", "goal"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UserError("expected a non-empty string", path=path, field=json_path([key]))
    verifier = data.get("verifier")
    if not isinstance(verifier, dict) or not isinstance(verifier.get("name"), str):
        raise UserError("expected an object {name, args}", path=path, field="$.verifier")
    args = verifier.get("args", {})
    if not isinstance(args, dict):
        raise UserError("expected an object", path=path, field="$.verifier.args")
    name = verifier["name"]
    ignored: list[str] = []
    if name in ARGS:
        required, optional = ARGS[name]
        args = dict(args)
        if name == "shell_exit_zero" and "command" in args and "cmd" not in args:
            args = {"cmd": args.pop("command"), **args}
        ignored = [key for key in args if key not in required + optional]
        for key in required:
            if key not in args:
                raise UserError(f"required by {name}", path=path,
                                field=json_path(["verifier", "args", key]))
        if name == "shell_exit_zero" and "argv" not in args and "cmd" not in args:
            raise UserError("required by shell_exit_zero (a list of strings; or cmd, a command "
                            "line)", path=path, field=json_path(["verifier", "args", "argv"]))
        _check_args(name, args, path)
    return {"id": data["id"], "goal": data["goal"], "verifier": {"name": name, "args": args},
            "ignored": ignored}


def _check_args(name: str, args: dict, path: Path) -> None:
    def where(key: str) -> str:
        return json_path(["verifier", "args", key])

    for key in ("path", "expected"):
        if key in args:
            value = args[key]
            if (not isinstance(value, str) or not value or value.startswith("/")
                    or ".." in Path(value).parts):
                raise UserError("expected a relative path inside the task's files", path=path,
                                field=where(key))
    if name == "regex_match":
        try:
            re.compile(args["pattern"])
        except (re.error, TypeError) as exc:
            raise UserError(f"not a valid regular expression: {exc}", path=path,
                            field=where("pattern")) from None
    if name == "shell_exit_zero":
        argv = args.get("argv")
        if "argv" in args and (not isinstance(argv, list) or not argv
                               or not all(isinstance(a, str) and a for a in argv)):
            raise UserError("expected a non-empty list of non-empty strings (the command and "
                            "its arguments, run without a shell)", path=path, field=where("argv"))
        if "argv" not in args and (not isinstance(args["cmd"], str) or not args["cmd"].strip()):
            raise UserError("expected a command line", path=path, field=where("cmd"))
        if timeout_seconds(args) is None:
            raise UserError("expected seconds > 0 and <= 3600 (a number, or a string Python's "
                            "float() reads)", path=path, field=where("timeout_seconds"))


def timeout_seconds(args: dict) -> float | None:
    """The timeout as the original reads it (float(value), default 10); None when unusable."""
    value = args.get("timeout_seconds", DEFAULT_TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 < seconds <= 3600 else None


def normalize_trailing_newline(args: dict) -> bool:
    """file_equals's flag as the original reads it: bool(value), default true."""
    return bool(args.get("normalize_trailing_newline", True))


def argument_warnings(data: dict) -> list[str]:
    """What the import reads differently from how it looks, as the original harness does."""
    name, args = data["verifier"]["name"], data["verifier"]["args"]
    found = [f"argument {key!r} is not one {name} reads: ignored, as the original ignores it"
             + (" (file_equals compares with expected/<path>)" if key == "expected" else "")
             for key in data["ignored"]]
    flag = args.get("normalize_trailing_newline")
    if "normalize_trailing_newline" in args and not isinstance(flag, bool):
        found.append(f"normalize_trailing_newline is {json.dumps(flag)}, not true or false: the "
                     f"original reads bool({flag!r}) = {bool(flag)}, and so does this import")
    if isinstance(args.get("timeout_seconds"), str):
        found.append(f"timeout_seconds is the string {args['timeout_seconds']!r}: read as "
                     f"float(), {timeout_seconds(args):g}s, as the original does")
    if name == "shell_exit_zero" and "argv" not in args:
        found.append("cmd is this project's extension: the original reads only argv and fails "
                     "every candidate of this task; imported as `sh -c cmd`")
    elif name == "shell_exit_zero" and "cmd" in args:
        found.append("cmd is ignored: argv is what the original runs")
    return found


def _task(data: dict, task_file: Path, folder: Path, today: dt.date) -> ImportedTask:
    name, args = data["verifier"]["name"], data["verifier"]["args"]
    buggy = read_tree(folder / "buggy", label="buggy/") if (folder / "buggy").is_dir() else {}
    expected = (read_tree(folder / "expected", label="expected/")
                if (folder / "expected").is_dir() else None)
    files = {f"repo-state/{rel}": content for rel, content in buggy.items()}
    task = ImportedTask(data["id"], folder_name(data["id"]), files)
    task.warnings.extend(argument_warnings(data))
    files["prompt.md"] = (data["goal"].strip() + "\n").encode("utf-8")
    if name == "file_equals":
        wanted = args["path"]
        if expected is None or wanted not in expected:
            raise UserError(f"expected/{wanted} is missing (file_equals compares with it)",
                            path=folder, field=json_path(["verifier", "args", "path"]))
        files[f"expected/{wanted}"] = expected[wanted]
    files["checks.py"] = checks_text(name, args).encode("utf-8")
    patch = file_patch(buggy, expected) if expected is not None else ""
    if patch:
        files["solution/fix.patch"] = patch.encode("utf-8")
    else:
        files["solution/solve.sh"] = SOLUTION_PLACEHOLDER.encode("utf-8")
        task.executable.add("solution/solve.sh")
        why = ("has no expected/ folder" if expected is None
               else "has an expected/ folder equal to buggy/")
        task.todo.append(f"solution/solve.sh: the source {why}; write a known-good output "
                         "(solve.sh or fix.patch) that passes checks.py")
    if name in TEXT_VERIFIERS:
        task.warnings.append(f"{name} judges text, not behaviour (false positives and "
                             "negatives); suggest a behaviour check")
    else:
        task.warnings.append("shell_exit_zero runs a command from the workspace, which the agent "
                             "may edit; consider restoring the files it runs "
                             "(ci_eval.checks.restore_pristine)")
    metadata: dict[str, Any] = {
        "difficulty": 2, "area": "imported", "tags": ["imported", NAME, name.replace("_", "-")],
        "created": today.isoformat(),
        IMPORTED_KEY: {"format": NAME, "id": data["id"], "source": str(task_file),
                       "verifier": data["verifier"]},
    }
    if name == "shell_exit_zero":
        limit = timeout_seconds(args) or DEFAULT_TIMEOUT  # an unusable one was refused above
        metadata["timeout_seconds"] = {"checks": max(120, int(limit) + 30)}
    files["metadata.json"] = metadata_json(metadata)
    return task


def folder_name(source_id: str) -> str:
    """The task folder's name after task-NNN-: the id in kebab case, without a task number it
    already starts with ("task_001_fizzbuzz_offbyone" -> "fizzbuzz-offbyone")."""
    name = kebab(source_id)
    return TASK_NUMBER_PREFIX.sub("", name, count=1) if TASK_NUMBER_PREFIX.match(name) else name


def checks_text(name: str, args: dict) -> str:
    """checks.py calling the ci_eval.checks helper with the upstream semantics."""
    # no source text in the docstring: the id is in metadata.json, the arguments are repr()s
    head = (f'"""Imported from a fixture-json task (metadata.json x-imported-from): verifier '
            f"{name}, with its\nupstream semantics\n"
            "(so every verdict is the original harness's, its false positives and negatives "
            'included)."""\n\n')
    if name == "file_equals":
        path, normalize = args["path"], normalize_trailing_newline(args)
        return (head + "from ci_eval.checks import file_equals, main, task_dir\n\n"
                f"main(file_equals({path!r}, task_dir() / 'expected' / {path!r},\n"
                f"                 ignore_trailing_newlines={normalize!r}, "
                "universal_newlines=True))\n")
    if name == "regex_match":
        return (head + "import re\n\nfrom ci_eval.checks import main, regex_match\n\n"
                f"main(regex_match({args['path']!r}, {args['pattern']!r}, flags=re.MULTILINE,\n"
                "                 universal_newlines=True))\n")
    timeout = timeout_seconds(args)
    if "argv" in args:
        return (head + "from ci_eval.checks import main, shell_exit_zero\n\n"
                f"main(shell_exit_zero({args['argv']!r}, timeout={timeout!r}))\n")
    return (head + "from ci_eval.checks import main, shell_exit_zero\n\n"
            f"main(shell_exit_zero({args['cmd']!r}, timeout={timeout!r}, shell='sh'))\n")
