"""The environment image of an imported SWE-bench instance, built from SWE-bench's specification for
its repository and `version` (swebench.harness.constants MAP_REPO_VERSION_TO_SPECS, vendored as
data in swe_bench_specs.json, or a team's file of the same shape: `--env-spec FILE`).

SWE-bench's harness creates an environment of the spec's Python, installs the repository's
requirements file as the `environment_setup_commit` has it (the first of the repo's
`requirements_paths` there, `-r` includes read from the same folder, `-e .` and comments
dropped), or the spec's `packages` list, then `pip_packages`, then runs `install` in the
repository. Here environment/Dockerfile does the same on `python:<python>-slim`: requirements.txt,
then pip-packages.txt (both files of the build context, so no requirement reaches a shell);
`install` is not run (the workspace is mounted when the checks run; a src layout is put on the
path by checks.py), and `pre_install` (shell commands) is not carried: the import says so.

Everything here is untrusted (the record, the spec file, the repository's requirements file):
each requirement must be a plain `name[extras] specifiers ; marker` (no option, URL or path),
the Python version `3.N`; anything else is bad input naming the file and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ci_eval import strict_json
from ci_eval.errors import UserError
from ci_eval.output import UntrustedFile, read_capped, read_capped_beneath, read_user_file

SPECS_FILE = Path(__file__).with_name("swe_bench_specs.json")
MAX_SPEC_BYTES = 4 * 1024 * 1024
MAX_REQUIREMENTS_BYTES = 1024 * 1024
MAX_WHEEL_BYTES = 256 * 1024 * 1024
MAX_WHEELS_BYTES = 2 * 1024 * 1024 * 1024
WHEEL_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+!-]*\.(whl|tar\.gz|zip)$")
PYTHON_VERSION = re.compile(r"^3\.[0-9]{1,2}$")
VERSION_KEY = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_VERSION = r"\s*(?:===|==|~=|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+"
# name[extras] specifiers ; marker: what pip reads as one requirement, and nothing it reads as an
# option (-i URL, -e PATH), a URL, a path or another file
REQUIREMENT = re.compile(rf"^{_NAME}(?:\s*\[\s*{_NAME}(?:\s*,\s*{_NAME})*\s*\])?"
                         rf"(?:{_VERSION}(?:\s*,{_VERSION})*)?"
                         r"(?:\s*;\s*[A-Za-z0-9_.<>=!~'\" ()]+)?$")
# a relative path of the repository, with no "." or ".." component
INCLUDE = re.compile(r"^(?!(?:.*/)?\.\.?(?:/|$))[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*$")
# the lines SWE-bench's harness drops from a requirements file (get_requirements_by_commit)
DROPPED_PREFIXES = ("-e .", "#", ".[test")
REQUIREMENTS_FILES = ("requirements.txt", "environment.yml")
WHEELS_IN_IMAGE = "/tmp/ci-eval-env/wheels"


@dataclass(frozen=True)
class EnvSpec:
    repo: str
    version: str
    python: str
    packages: str  # "requirements.txt" (the repo's file), "environment.yml", a list, or ""
    pip_packages: tuple[str, ...]
    requirements_paths: tuple[str, ...]
    install: str
    pre_install: tuple[str, ...]
    source: Path  # the spec file it came from


def load_specs(extra: Path | None = None) -> dict[tuple[str, str], EnvSpec]:
    """The vendored specs, with `extra`'s entries (--env-spec) in place of any of the same repo
    and version."""
    specs = _specs_of(SPECS_FILE)
    if extra is not None:
        specs.update(_specs_of(Path(extra), field="--env-spec"))
    return specs


def _specs_of(path: Path, field: str | None = None) -> dict[tuple[str, str], EnvSpec]:
    if not path.is_file():
        raise UserError("no such file (expected SWE-bench environment specs, JSON)", path=path,
                        field=field)
    data = read_user_file(path, field=field)
    if len(data) > MAX_SPEC_BYTES:
        raise UserError(f"more than {MAX_SPEC_BYTES // (1024 * 1024)} MiB", path=path, field=field)
    try:
        document = strict_json.loads(data.decode("utf-8", errors="replace"))
    except ValueError as exc:
        raise UserError(f"invalid JSON: {exc}", path=path, field=field) from None
    repos = document.get("repos") if isinstance(document, dict) else None
    if not isinstance(repos, dict):
        raise UserError('expected {"repos": {"owner/name": {"versions": {...}}}}', path=path,
                        field="repos")
    specs = {}
    for repo, entry in repos.items():
        where = f"repos.{repo}"
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo) or not isinstance(entry, dict):
            raise UserError("expected owner/name: {versions, requirements_paths}", path=path,
                            field=where)
        paths = _strings(entry.get("requirements_paths", []), path, f"{where}.requirements_paths",
                         INCLUDE, "a path inside the repository")
        versions = entry.get("versions")
        if not isinstance(versions, dict) or not versions:
            raise UserError("expected an object of versions", path=path, field=f"{where}.versions")
        for version, spec in versions.items():
            if not VERSION_KEY.fullmatch(version):
                raise UserError(f"expected a version (letters, digits, . _ + -), got {version!r}",
                                path=path, field=f"{where}.versions")
            specs[(repo, version)] = _spec(repo, version, spec, paths, path,
                                           f"{where}.versions.{version}")
    return specs


def _spec(repo: str, version: str, spec: object, paths: tuple[str, ...], path: Path,
          where: str) -> EnvSpec:
    if not isinstance(spec, dict):
        raise UserError("expected an object {python, packages, pip_packages, install}", path=path,
                        field=where)
    python = spec.get("python")
    if not isinstance(python, str) or not PYTHON_VERSION.fullmatch(python):
        raise UserError(f"expected a Python version 3.N, got {python!r}", path=path,
                        field=f"{where}.python")
    packages = spec.get("packages", "")
    if not isinstance(packages, str):
        raise UserError("expected a string", path=path, field=f"{where}.packages")
    if packages not in REQUIREMENTS_FILES:
        for number, name in enumerate(packages.split()):
            _requirement(name.strip("'\""), path, f"{where}.packages[{number}]")
    if packages == "requirements.txt" and not paths:
        raise UserError("packages is requirements.txt but the repository names no "
                        "requirements_paths", path=path, field=where)
    for key in ("install",):
        if not isinstance(spec.get(key, ""), str):
            raise UserError("expected a string", path=path, field=f"{where}.{key}")
    return EnvSpec(repo, version, python, packages,
                   _strings(spec.get("pip_packages", []), path, f"{where}.pip_packages",
                            REQUIREMENT, "a requirement (name, extras, versions, marker)"),
                   paths, spec.get("install", ""),
                   _strings(spec.get("pre_install", []), path, f"{where}.pre_install", None, ""),
                   path)


def _strings(value: object, path: Path, field: str, pattern: re.Pattern | None,
             expected: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UserError("expected a list of strings", path=path, field=field)
    for number, item in enumerate(value):
        if pattern is not None and not pattern.fullmatch(item):
            raise UserError(f"expected {expected}, got {item!r}", path=path,
                            field=f"{field}[{number}]")
    return tuple(value)


def _requirement(line: str, path: Path, field: str) -> str:
    if not REQUIREMENT.fullmatch(line):
        raise UserError(f"expected a requirement (name, extras, versions, marker), got {line!r}",
                        path=path, field=field)
    return line


def requirements_of(tree: Path, spec: EnvSpec, src: Path, where: str) -> tuple[str, list[str]]:
    """The requirements SWE-bench's harness installs from the repository's requirements file in
    `tree` (the environment_setup_commit's files): (the file's path, its lines, the `-r`
    includes' lines first). UserError naming `src`, `where` and the file and line for a line that
    is not a plain requirement; LookupError when no requirements path is there."""
    for rel in spec.requirements_paths:
        text = _read(tree, rel, src, where)
        if text is not None:
            break
    else:
        raise LookupError(f"none of {', '.join(spec.requirements_paths)} is there")
    folder = PurePosixPath(rel).parent
    own, included = [], []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("-r"):
            name = stripped[2:].strip()
            include = str(folder / name)
            if not INCLUDE.fullmatch(name) or ".." in PurePosixPath(include).parts:
                raise UserError(f"{rel} line {number}: expected -r FILE (a file next to it), got "
                                f"{stripped!r}", path=src, field=where)
            extra = _read(tree, include, src, where) or ""
            included += _lines(extra, include, src, where)
        else:
            own += _lines(line, rel, src, where, number)
    return rel, included + own


def _lines(text: str, rel: str, src: Path, where: str, first: int = 1) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), first):
        stripped = line.strip()
        if not stripped or stripped.startswith(DROPPED_PREFIXES):
            continue
        requirement = re.sub(r"\s+#.*$", "", stripped)
        _requirement(requirement, src, f"{where}: {rel} line {number}")
        found.append(requirement)
    return found


def _read(tree: Path, rel: str, src: Path, where: str) -> str | None:
    try:
        data = read_capped_beneath(tree, rel, MAX_REQUIREMENTS_BYTES)
    except UntrustedFile as exc:
        raise UserError(f"{rel}: {exc}", path=src, field=where) from None
    return None if data is None else data.decode("utf-8", errors="replace")


def read_wheels(folder: Path) -> dict[str, bytes]:
    """The wheels (and source archives) at the top of `folder` (--wheels): regular files only,
    each capped; UserError naming the folder otherwise."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError("no such folder (expected a folder of wheels)", path=folder,
                        field="--wheels")
    found, total = {}, 0
    for entry in sorted(folder.iterdir()):
        if not WHEEL_FILE.fullmatch(entry.name):
            continue
        try:
            data = read_capped(entry, MAX_WHEEL_BYTES)
        except UntrustedFile as exc:
            raise UserError(str(exc), path=folder, field="--wheels") from None
        total += len(data or b"")
        if data is None or total > MAX_WHEELS_BYTES:
            raise UserError(f"{entry.name}: gone, or more than "
                            f"{MAX_WHEELS_BYTES // 1024 ** 3} GiB in all", path=folder,
                            field="--wheels")
        found[entry.name] = data
    if not found:
        raise UserError("holds no wheel (*.whl, *.tar.gz, *.zip)", path=folder, field="--wheels")
    return found


def environment_files(spec: EnvSpec, requirements: list[str], wheels: dict[str, bytes],
                      origin: str) -> dict[str, bytes]:
    """environment/Dockerfile and its build context: requirements.txt (what SWE-bench installs
    first), pip-packages.txt (then), wheels/ (with --wheels: installed from them alone)."""
    pip = "python -m pip install --no-cache-dir --disable-pip-version-check"
    if wheels:
        pip += f" --no-index --find-links {WHEELS_IN_IMAGE}"
    steps = [f"{pip} -r /tmp/ci-eval-env/{name}" for name, lines in
             (("requirements.txt", requirements), ("pip-packages.txt", spec.pip_packages))
             if lines]
    note = [f"# Written by `ci-eval import swe-bench` from SWE-bench's specification of "
            f"{spec.repo} {spec.version}",
            f"# ({_printable(spec.source.name)}): Python {spec.python}, {origin}, then its pip_packages.",
            "# SWE-bench then installs the repository itself; here the workspace is mounted when "
            "the checks run."]
    lines = [*note, f"FROM python:{spec.python}-slim",
             "COPY requirements.txt pip-packages.txt /tmp/ci-eval-env/"]
    if wheels:
        lines.append(f"COPY wheels {WHEELS_IN_IMAGE}")
    lines.append("RUN " + " \\\n && ".join([*steps, "rm -rf /tmp/ci-eval-env"]))
    files = {"environment/Dockerfile": ("\n".join(lines) + "\n").encode(),
             "environment/requirements.txt": "".join(f"{r}\n" for r in requirements).encode(),
             "environment/pip-packages.txt": "".join(f"{r}\n" for r in spec.pip_packages).encode()}
    files.update({f"environment/wheels/{name}": data for name, data in wheels.items()})
    return files


@dataclass
class Environment:
    files: dict[str, bytes]
    todo: list[str]
    warnings: list[str]


COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


def environment_for(instance: dict, specs: dict[tuple[str, str], EnvSpec],
                    wheels: dict[str, bytes], tree_of, src: Path, where: str) -> Environment | None:
    """The environment files of `instance` from its repo and version's spec (None: no spec, the
    environment is the team's to write). `tree_of(commit)` gives a commit's files (raising
    LookupError when it cannot be had)."""
    version = instance.get("version")
    if version is not None and not isinstance(version, str):
        raise UserError("expected a string", path=src, field=f"{where}: version")
    spec = specs.get((instance["repo"], version)) if version else None
    if spec is None:
        return None
    todo: list[str] = []
    requirements: list[str] = []
    origin = "no requirements file"
    if spec.packages == "requirements.txt":
        commit = instance.get("environment_setup_commit") or instance["base_commit"]
        if not isinstance(commit, str) or not COMMIT.fullmatch(commit):
            raise UserError(f"expected a commit (hex), got {commit!r}", path=src,
                            field=f"{where}: environment_setup_commit")
        origin = f"{' or '.join(spec.requirements_paths)} at {commit[:12]}"
        try:
            rel, requirements = requirements_of(tree_of(commit), spec, src, where)
            origin = f"the requirements of {rel} at {commit[:12]}"
        except LookupError as exc:
            todo.append(f"environment/requirements.txt: the requirements SWE-bench installs "
                        f"first, from {origin} ({exc}), then delete the marker line of checks.py")
    elif spec.packages == "environment.yml":
        todo.append(f"environment/requirements.txt: SWE-bench builds {spec.repo} {spec.version} "
                    "from the repository's conda environment.yml (not carried): its packages as "
                    "pip requirements, then delete the marker line of checks.py")
    elif spec.packages:
        requirements = [name.strip("'\"") for name in spec.packages.split()]
        origin = "the spec's packages"
    if spec.pre_install:
        todo.append(f"environment/Dockerfile: SWE-bench's pre_install steps for {spec.repo} "
                    f"{spec.version} (shell commands, not carried: {list(spec.pre_install)!r}), "
                    "then delete the marker line of checks.py")
    warnings = [f"environment/Dockerfile from SWE-bench's specification of {spec.repo} "
                f"{spec.version} ({_printable(spec.source.name)}: Python {spec.python}, {origin}, "
                f"pip_packages{', from --wheels alone' if wheels else ''}): for --runner docker; "
                "the local runner needs these packages in the interpreter that runs ci-eval"]
    if spec.install:
        warnings.append(f"SWE-bench then runs {spec.install!r} in the repository: the image does "
                        "not install the workspace (it is mounted when the checks run), so the "
                        "repository's own dependencies come from these pins alone")
    return Environment(environment_files(spec, requirements, wheels, origin), todo, warnings)


def _printable(name: str) -> str:
    """A file name as the Dockerfile's comment shows it: one line, no control character."""
    return re.sub(r"[^A-Za-z0-9_.+ -]", "?", name)
