"""`ci-eval import swe-bench FILE`: SWE-bench instances (JSON lines) -> native tasks pinned to the
instance's base commit (docs/tasks-beyond-python.md).

One instance per line: {"instance_id", "repo", "base_commit", "patch", "test_patch",
"problem_statement", "FAIL_TO_PASS", "PASS_TO_PASS"} (the two lists as JSON arrays or, as the
published data sets have them, as strings holding one). `repo` is "owner/name" (fetched from
https://github.com/owner/name.git) or a URL (file://, https://, git@host:path) taken as it is.

  problem_statement  -> prompt.md
  repo, base_commit  -> metadata.json repo: {url, commit} (no repo-state/)
  patch              -> solution/fix.patch
  test_patch         -> test-files/: each file it touches as it is after the patch, put back by
                        checks.py before the tests run (restore_from), so agent edits to those
                        files do not count; a file the patch deletes is removed
  FAIL_TO_PASS / PASS_TO_PASS -> metadata.json fail_to_pass / pass_to_pass, run by run_tests

The base commit is fetched at import (into the cache of tasks/upstream.py) to make test-files/:
an instance whose commit cannot be had, or whose test_patch does not apply to it, is bad input
naming the instance (exit 2, nothing written). The ids are run as pytest node ids; an instance
whose repository's tests need another runner (django's) needs its checks.py rewritten
(run_junit_tests). The environment (the repository's dependencies at that commit): written as
environment/Dockerfile from SWE-bench's specification of the repo and version when one is known
(swe_bench_env.py); otherwise the team's to provide, named in each task's to-do list.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ci_eval import strict_json
from ci_eval.errors import UserError
from ci_eval.importers.base import (
    IMPORTED_KEY,
    MAX_SOURCE_BYTES,
    Conversion,
    ImportedTask,
    Skipped,
    kebab,
    metadata_json,
)
from ci_eval.importers.swe_bench_env import environment_for, load_specs, read_wheels
from ci_eval.output import UntrustedFile, read_capped, read_user_file
from ci_eval.tasks.model import PLACEHOLDER_MARKER
from ci_eval.tasks.upstream import GIT_ENV, URL_PATTERN, UpstreamError
from ci_eval.tasks.upstream import tree as upstream_tree

NAME = "swe-bench"
SUMMARY = "SWE-bench instances (JSON lines): repo, base_commit, patch, test_patch, FAIL_TO_PASS"
REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
            "FAIL_TO_PASS")
TEST_FILES = "test-files"
REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
# No source text is spliced into this program: the instance id lives in metadata.json
# (x-imported-from), the paths and arguments are repr()s of strings.
CHECKS = '''"""Imported from a SWE-bench instance (metadata.json x-imported-from): the test patch's
files put back as the instance has them, then its FAIL_TO_PASS / PASS_TO_PASS tests (metadata.json)
run with the repository's own pytest configuration and conftest.py files as the base commit has
them (kept in {folder}/: the agent's are never loaded)."""
{marker}
import os

from ci_eval.checks import declared_tests, main, restore_from, run_tests

TEST_FILES = {paths!r}
# the folders put first on the path, as installing the repository would (a src layout's src/)
PATHS = {paths_on_path!r}


def tests():
    restore_from({folder!r}, TEST_FILES)
    args = ["-o", "pythonpath=" + " ".join(os.path.abspath(p) for p in PATHS)] if PATHS else []
    return run_tests(*declared_tests(), project_config={folder!r}, args=args)


main(tests)
'''
ENVIRONMENT_MARKER = (f"# {PLACEHOLDER_MARKER}: set up the environment (the to-do of `ci-eval import`, "
                      "see metadata.json), check\n# it with `ci-eval verify`, then delete this "
                      "line; `ci-eval validate` reports the task until then.\n")
# pytest's configuration files, as it looks for them at the rootdir (kept pristine in test-files/)
PYTEST_CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def convert(src: Path, *, today: dt.date, already: Mapping[str, str] = {},
            mirrors: Mapping[str, str] = {}, env_spec: Path | None = None,
            wheels: Path | None = None) -> Conversion:
    """Read every instance of the JSON-lines file `src`; the base commits are fetched into the
    cache (from `mirrors`' local copy of a repo when it names one: {"owner/name": PATH}),
    nothing else is written. `env_spec`: a file of SWE-bench environment specs used before the
    vendored ones; `wheels`: a folder of wheels the images install from alone."""
    result = Conversion()
    specs = load_specs(env_spec)
    wheel_files = read_wheels(wheels) if wheels is not None else {}
    used = set()
    for line_no, instance in _instances(Path(src)):
        instance_id = instance["instance_id"]
        if instance_id in already:
            result.skipped.append(Skipped(instance_id, f"already imported as {already[instance_id]}"))
            continue
        fail_to_pass = _ids(instance, "FAIL_TO_PASS", src, line_no)
        pass_to_pass = _ids(instance, "PASS_TO_PASS", src, line_no)
        if not fail_to_pass:
            result.skipped.append(Skipped(instance_id, "FAIL_TO_PASS is empty (nothing to fix)"))
            continue
        mirror = mirrors.get(instance["repo"])
        if mirror:
            used.add(instance["repo"])
        result.tasks.append(_task(instance, fail_to_pass, pass_to_pass, today, src, line_no,
                                  mirror, specs, wheel_files))
    result.warnings.extend(f"--mirror {repo}: no instance of the file is of that repo"
                           for repo in sorted(set(mirrors) - used))
    return result


def parse_mirrors(values: list[str]) -> dict[str, str]:
    """`--mirror OWNER/NAME=PATH` options as {"owner/name": "file:///abs/path"}; UserError naming
    the option otherwise (PATH must be a folder: a bare repository or a clone)."""
    found = {}
    for value in values:
        repo, _, path = value.partition("=")
        if not REPO_NAME.match(repo) or not path:
            raise UserError(f"expected OWNER/NAME=PATH (a local copy of a repository), got "
                            f"{value!r}", field="--mirror")
        folder = Path(path).expanduser().resolve()
        if not folder.is_dir():
            raise UserError("no such folder (expected a clone or bare repository of "
                            f"{repo})", path=folder, field="--mirror")
        found[repo] = f"file://{folder}"
    return found


def _instances(src: Path) -> list[tuple[int, dict]]:
    if not src.is_file():
        raise UserError("no such file (expected SWE-bench instances, one JSON object a line)",
                        path=src, field="SRC")
    data = read_user_file(src, field="SRC")
    if len(data) > MAX_SOURCE_BYTES:
        raise UserError(f"more than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB to import", path=src)
    found = []
    for line_no, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            instance = strict_json.loads(line)
        except ValueError as exc:
            raise UserError(f"invalid JSON: {exc}", path=src, field=f"line {line_no}") from None
        if not isinstance(instance, dict):
            raise UserError("expected a JSON object (one instance a line)", path=src,
                            field=f"line {line_no}")
        for key in REQUIRED:
            if not isinstance(instance.get(key), (str, list) if key == "FAIL_TO_PASS" else str):
                raise UserError("missing or not a string" if key != "FAIL_TO_PASS" else
                                "missing (expected a list of test ids)", path=src,
                                field=f"line {line_no}: {key}")
        found.append((line_no, instance))
    if not found:
        raise UserError("holds no instance", path=src, field="SRC")
    return found


def _ids(instance: dict, key: str, src: Path, line_no: int) -> list[str]:
    value = instance.get(key, [])
    if isinstance(value, str):  # the published data sets keep the lists as JSON strings
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError:
            value = None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UserError("expected a list of test ids (or a string holding one)", path=src,
                        field=f"line {line_no}: {key}")
    return list(dict.fromkeys(value))


def repo_url(repo: str) -> str:
    return repo if URL_PATTERN.match(repo) else f"https://github.com/{repo}.git"


def _task(instance: dict, fail_to_pass: list[str], pass_to_pass: list[str], today: dt.date,
          src: Path, line_no: int, mirror: str | None, specs: dict,
          wheels: dict[str, bytes]) -> ImportedTask:
    instance_id = instance["instance_id"]
    url, commit = repo_url(instance["repo"]), instance["base_commit"]
    where = f"line {line_no}: {instance_id}"
    try:
        base = upstream_tree(instance_id, url, commit, source=mirror)
    except UpstreamError as exc:
        raise UserError(str(exc), path=src, field=where) from None
    test_files = _patched_files(base, instance["test_patch"], src, where)
    pristine = _pristine_config(base, test_files, fail_to_pass + pass_to_pass)
    src_layout = _src_layout(base)
    environment = environment_for(instance, specs, wheels,
                                  lambda sha: _tree(instance_id, url, sha, mirror), src, where)
    metadata = {
        "difficulty": 3, "area": "bug-fix", "tags": ["swe-bench", kebab(instance["repo"])],
        "created": today.isoformat(), "repo": {"url": url, "commit": commit},
        "fail_to_pass": fail_to_pass, **({"pass_to_pass": pass_to_pass} if pass_to_pass else {}),
        IMPORTED_KEY: {"format": NAME, "id": instance_id, "source": str(src),
                       **({"mirror": mirror} if mirror else {})},
    }
    files = {
        "prompt.md": instance["problem_statement"].rstrip("\n").encode() + b"\n",
        "metadata.json": metadata_json(metadata),
        "checks.py": CHECKS.format(paths=sorted(test_files), folder=TEST_FILES,
                                   marker=ENVIRONMENT_MARKER
                                   if environment is None or environment.todo else "",
                                   paths_on_path=["src"] if src_layout else []).encode(),
        "solution/fix.patch": instance["patch"].encode(),
        **{f"{TEST_FILES}/{rel}": data for rel, data in {**pristine, **test_files}.items()
           if data is not None},
    }
    if environment is not None:
        files.update(environment.files)
    todo = environment.todo if environment is not None else [_environment_todo(instance, commit)]
    task = ImportedTask(instance_id, kebab(instance_id), files, todo=todo,
                        warnings=environment.warnings if environment is not None else [
                            f"no SWE-bench environment specification of {instance['repo']} "
                            f"{instance.get('version') or '(no version)'}: environment/"
                            "Dockerfile not written (--env-spec FILE gives one)"])
    if src_layout:
        task.warnings.append("src layout: the tests run with the workspace's src/ first on the "
                             "path (pytest's pythonpath), so the workspace's package is the one "
                             "imported, as SWE-bench's install of the repository makes it")
    return task


def _environment_todo(instance: dict, commit: str) -> str:
    version = instance.get("version")
    return (f"the environment: {instance['repo']} at {commit[:12]}"
            + (f" (version {version})" if version else "")
            + " with its test dependencies and pytest: importable by the interpreter that runs "
            "ci-eval (local runner; name the commands it needs in metadata.json requires), or "
            "installed in an image built from environment/Dockerfile (--runner docker; "
            + (f"or import again with --env-spec FILE holding SWE-bench's specification of "
               f"{instance['repo']} {version}, swebench.harness.constants "
               "MAP_REPO_VERSION_TO_SPECS, and the import writes it; " if version else "")
            + "docs/tasks-beyond-python.md)")


def _tree(instance_id: str, url: str, commit: str, mirror: str | None) -> Path:
    try:
        return upstream_tree(instance_id, url, commit, source=mirror)
    except UpstreamError as exc:
        raise LookupError(f"not fetched: {exc}") from None


def _pristine_config(base: Path, patched: dict[str, bytes | None], ids: list[str]) -> dict:
    """The base commit's conftest.py files on the way to every test id and its pytest
    configuration files (the test patch's version where it touches them): the checks load
    these, never the agent's."""
    wanted = set(PYTEST_CONFIG_FILES)
    for test_id in ids:
        parts = Path(test_id.split("::", 1)[0]).parts
        wanted.update(str(Path(*parts[:depth], "conftest.py")) for depth in range(len(parts)))
    found = {}
    for rel in sorted(wanted - set(patched)):
        if _linked(base, rel) or not (base / rel).is_file():
            continue
        try:
            data = read_capped(base / rel, MAX_SOURCE_BYTES)
        except UntrustedFile:
            continue
        if data is not None:
            found[rel] = data
    return found


def _src_layout(base: Path) -> bool:
    """Whether the repository keeps its package under src/ (src/NAME/__init__.py) and not at
    the top: the tests import it only once src/ is on the path (or the repo installed)."""
    folder = base / "src"
    if not folder.is_dir() or folder.is_symlink():
        return False
    packages = [p.name for p in folder.iterdir() if not p.is_symlink() and p.is_dir()
                and (p / "__init__.py").is_file()]
    return bool(packages) and not any((base / name).is_dir() for name in packages)


def _patched_files(base: Path, patch: str, src: Path, where: str) -> dict[str, bytes | None]:
    """Each file the test patch touches, as it is after the patch (None: the patch deletes it).
    No link is followed or made: a patch that creates a symbolic link (or a path that goes
    through one in the base commit) is refused, naming the path."""
    scratch = Path(tempfile.mkdtemp(prefix="ci-eval-import-"))
    try:
        (scratch / "test.patch").write_text(patch)
        touched = _git_apply(scratch, ["--numstat", "-z", str(scratch / "test.patch")], src,
                             where, cwd=scratch)
        paths = [entry.split("\t", 2)[2] for entry in touched.split("\0") if entry.count("\t") >= 2]
        summary = _git_apply(scratch, ["--summary", str(scratch / "test.patch")], src, where,
                             cwd=scratch)
        for line in summary.splitlines():
            if SYMLINK_MODE in line.split():
                raise UserError(f"test_patch makes a symbolic link ({line.strip()}): not "
                                "imported (a link could point anywhere)", path=src, field=where)
        tree = scratch / "tree"
        tree.mkdir()
        for rel in paths:
            if _linked(base, rel):
                raise UserError(f"{rel}: goes through a symbolic link in the base commit (not "
                                "followed)", path=src, field=where)
            if (base / rel).is_file():
                (tree / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(base / rel, tree / rel, follow_symlinks=False)
        _git_apply(scratch, [str(scratch / "test.patch")], src, where, cwd=tree)
        return {rel: _patched(tree, rel, src, where) for rel in paths}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


SYMLINK_MODE = "120000"


def _linked(root: Path, rel: str) -> bool:
    """Whether any component of root/rel is a symbolic link."""
    path = root
    for part in Path(rel).parts:
        path = path / part
        if path.is_symlink():
            return True
    return False


def _patched(tree: Path, rel: str, src: Path, where: str) -> bytes | None:
    if _linked(tree, rel):
        raise UserError(f"{rel}: the test patch made it a symbolic link: not imported",
                        path=src, field=where)
    try:
        data = read_capped(tree / rel, MAX_SOURCE_BYTES)
    except UntrustedFile as exc:
        raise UserError(str(exc), path=src, field=where) from None
    return data


def _git_apply(scratch: Path, args: list[str], src: Path, where: str, *, cwd: Path) -> str:
    done = subprocess.run(["git", "apply", "--whitespace=nowarn", *args], cwd=cwd,
                          capture_output=True, check=False,
                          env={**GIT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                               "HOME": str(scratch),
                               # a repository above the scratch folder must not be the one patched
                               "GIT_CEILING_DIRECTORIES": str(scratch.parent)})
    if done.returncode:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise UserError("test_patch does not apply to the base commit"
                        + (f": {said[-1]}" if said else ""), path=src, field=where)
    return done.stdout.decode(errors="replace")
