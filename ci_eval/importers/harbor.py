"""`ci-eval import harbor SRC`: Harbor (Terminal-Bench 2) tasks -> native tasks on the docker runner.

The source format: a task is a folder holding

    instruction.md       what the agent is told
    task.toml            [metadata] difficulty, category, tags; [agent] timeout_sec;
                         [verifier] timeout_sec; [environment] build_timeout_sec, cpus,
                         memory_mb, storage_mb
    environment/         the build context: Dockerfile (the start state lives in the image,
                         usually WORKDIR /app)
    tests/test.sh        the verifier: runs in the container with tests/ at /tests and writes
                         1 or 0 to /logs/verifier/reward.txt (or reward.json)
    solution/solve.sh    the reference solution, written to run inside the container

SRC is one such folder or a folder of them. Mapping: instruction.md -> prompt.md; task.toml ->
metadata.json (difficulty easy/medium/hard -> 2/3/4, category -> area, tags, timeouts, and the
docker settings: runner docker, workspace image, verifier harbor, build timeout, cpus,
memory; allow_internet = false: agent_network none; environment/docker-compose.yaml's
services: docker.services, harbor_compose.py); environment/, tests/ and solution/ are
kept as they are. storage_mb is recorded in x-imported-from (the engine here has no
per-container disk quota). No checks.py: Harbor's test.sh is the verifier
(ci_eval/run/docker/harbor.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any
from pathlib import Path

from ci_eval.errors import UserError
from ci_eval.importers.base import (
    IMPORTED_KEY,
    Conversion,
    ImportedTask,
    Skipped,
    difficulty_value,
    executable_files,
    kebab,
    marked_folders,
    metadata_json,
    read_tree,
)
from ci_eval.importers.harbor_compose import compose_services
from ci_eval.importers.harbor_keys import CAPABILITIES, COMPOSE_FILES, capabilities, memory_mb, unsupported
from ci_eval.output import read_user_file
from ci_eval.tasks.model import MAX_TIMEOUT_SECONDS

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

NAME = "harbor"
SUMMARY = "Harbor / Terminal-Bench 2 tasks: instruction.md, task.toml, environment/, tests/, solution/"
TOML = "task.toml"
KNOWN_ENTRIES = {TOML, "instruction.md", "environment", "tests", "solution"}
KEPT_FOLDERS = ("environment", "tests", "solution")


def convert(src: Path, *, today: dt.date, already: Mapping[str, str] = {}) -> Conversion:
    """Every Harbor task of SRC; a folder that cannot be imported (a multi-step task, a missing
    or malformed file) is skipped with the reason when SRC holds several, and is the error
    when SRC is that one task."""
    result = Conversion()
    folders = source_tasks(Path(src))
    for folder in folders:
        source_id = folder.name
        if source_id in already:
            result.skipped.append(Skipped(source_id, f"already imported as {already[source_id]}"))
            continue
        try:
            data = _task_toml(folder / TOML)
            if data.get("steps"):
                raise UserError("a multi-step task ([[steps]]): not supported (import each "
                                "step as a task of its own)", path=folder / TOML, field="steps")
            result.tasks.append(_task(folder, data, today))
        except UserError as exc:
            if len(folders) == 1:
                raise
            result.skipped.append(Skipped(source_id, str(exc)))
    return result


def source_tasks(src: Path) -> list[Path]:
    return marked_folders(src, TOML, "a Harbor task")


def _task_toml(path: Path) -> dict:
    if tomllib is None:
        raise UserError("reading task.toml needs Python 3.11 or later (tomllib)", path=path)
    try:
        data = tomllib.loads(read_user_file(path).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"invalid TOML: {exc}", path=path) from None
    for table in ("metadata", "agent", "verifier", "environment"):
        if not isinstance(data.get(table, {}), dict):
            raise UserError("expected a table", path=path, field=f"[{table}]")
    return data


def _number(data: dict, table: str, key: str, path: Path, *, whole: bool = False,
            most: float = MAX_TIMEOUT_SECONDS):
    value = data.get(table, {}).get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= most or (
            whole and not float(value).is_integer()):
        kind = "a whole number" if whole else "a number"
        raise UserError(f"expected {kind} > 0 and <= {most:g}, got {value!r}", path=path,
                        field=f"[{table}].{key}")
    return int(value) if whole else float(value)


def _memory_mb(data: dict, path: Path) -> int | None:
    """[environment] memory_mb, or memory as Harbor writes it ("2G", "512M", a number of MB)."""
    environment = data.get("environment", {})
    if "memory" in environment and "memory_mb" not in environment:
        found = memory_mb(environment["memory"])
        if found is None:
            raise UserError(f"expected a size such as \"2G\" or \"512M\", got "
                            f"{environment['memory']!r}", path=path, field="[environment].memory")
        return found
    return _number(data, "environment", "memory_mb", path, whole=True, most=1048576)


def _docker_section(data: dict, toml_path: Path) -> dict:
    """metadata.json's docker: the task's Dockerfile built, its verifier Harbor's, and the
    [environment] limits and network (allow_internet = false: the agent has none) task.toml
    sets."""
    docker: dict[str, Any] = {"dockerfile": "environment/Dockerfile", "workspace": "image",
                              "verifier": "harbor"}
    for key, value in (("build_timeout_seconds", _number(data, "environment", "build_timeout_sec",
                                                          toml_path)),
                       ("cpus", _number(data, "environment", "cpus", toml_path, most=256)),
                       ("memory_mb", _memory_mb(data, toml_path))):
        if value is not None:
            docker[key] = value
    if data.get("environment", {}).get("allow_internet") is False:
        docker["agent_network"] = "none"
    return docker


def _task(folder: Path, data: dict, today: dt.date) -> ImportedTask:
    toml_path = folder / TOML
    instruction = folder / "instruction.md"
    if not instruction.is_file():
        raise UserError("missing (what the agent is told)", path=instruction)
    text = read_user_file(instruction).decode("utf-8", errors="strict").strip()
    if not text:
        raise UserError("is empty (expected the instruction)", path=instruction)
    for required in ("environment/Dockerfile", "tests/test.sh"):
        if not (folder / required).is_file():
            raise UserError("missing (every Harbor task has one)", path=folder / required)
    files = {"prompt.md": (text + "\n").encode("utf-8")}
    for part in KEPT_FOLDERS:
        if (folder / part).is_dir():
            files.update({f"{part}/{rel}": content for rel, content in
                          read_tree(folder / part, label=f"{part}/").items()})
    task = ImportedTask(folder.name, kebab(folder.name), files)
    task.executable.update(name for name in files if name.endswith(".sh"))
    for part in KEPT_FOLDERS:  # a COPY'd busybox, an entrypoint script: their modes kept
        if (folder / part).is_dir():
            task.executable.update(f"{part}/{rel}" for rel in executable_files(folder / part))
    if not (folder / "solution").is_dir():
        task.todo.append("solution/solve.sh: the source has no solution/; write one that makes "
                         "tests/test.sh write reward 1")
    meta = data.get("metadata", {})
    difficulty = difficulty_value(meta.get("difficulty", "medium"), toml_path,
                                  "[metadata].difficulty")
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        raise UserError("expected a list of strings", path=toml_path, field="[metadata].tags")
    category = meta.get("category", "harbor")
    if not isinstance(category, str) or not category.strip():
        raise UserError("expected a non-empty string", path=toml_path, field="[metadata].category")
    timeouts = {name: value for name, value in (
        ("agent", _number(data, "agent", "timeout_sec", toml_path)),
        ("checks", _number(data, "verifier", "timeout_sec", toml_path))) if value is not None}
    docker = _docker_section(data, toml_path)
    _sidecars_and_capabilities(folder, task, docker)
    origin = {"format": NAME, "id": folder.name, "source": str(toml_path)}
    storage = _number(data, "environment", "storage_mb", toml_path, whole=True, most=1 << 30)
    if storage is not None:
        origin["storage_mb"] = storage
        task.warnings.append(f"storage_mb {storage} recorded, not enforced (no per-container "
                             "disk quota on this engine's storage driver)")
    ignored = sorted(p.name for p in folder.iterdir() if p.name not in KNOWN_ENTRIES)
    if ignored:
        task.warnings.append(f"not imported: {', '.join(ignored)}")
    task.warnings.extend(unsupported(data, files, tuple(
        service["name"] for service in docker.get("services", ()))))
    metadata = {"difficulty": difficulty, "area": category.strip(),
                "tags": list(dict.fromkeys(["imported", NAME, *(t.strip() for t in tags)])),
                "created": today.isoformat(), "runner": "docker", "docker": docker,
                IMPORTED_KEY: origin}
    if timeouts:
        metadata["timeout_seconds"] = timeouts
    files["metadata.json"] = metadata_json(metadata)
    return task


def _sidecars_and_capabilities(folder: Path, task: ImportedTask, docker: dict) -> None:
    """docker.services from the compose file (Harbor reads the first of COMPOSE_FILES it finds)
    and docker.capabilities: those the scripts need, or, with sidecars, the user-switching
    ones (a database image's entrypoint chowns its data and drops to its user)."""
    files = task.files
    compose = [name for name in COMPOSE_FILES if name in files]
    if compose:
        services, warnings = compose_services(files[compose[0]], str(folder / compose[0]))
        if services:
            docker["services"] = services
        task.warnings.extend(warnings)
    needed = capabilities(files)
    if needed:
        task.warnings.append(f"its scripts change users or owners (useradd, chown, su): the "
                             f"containers get {', '.join(needed)} back (docker.capabilities)")
    elif docker.get("services"):
        needed = list(CAPABILITIES)
        task.warnings.append(f"its sidecars' images may switch users as they start (a "
                             f"database's entrypoint): the containers get {', '.join(needed)} "
                             "back (docker.capabilities)")
    if needed:
        docker["capabilities"] = needed
