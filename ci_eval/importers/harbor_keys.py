"""What of a Harbor task.toml (and its environment/) the import cannot carry over, said at import
naming the key, and Harbor's memory sizes ("2G"). Pure: the parsed TOML and the file tree in.

Carried over by ci_eval/importers/harbor.py: [metadata] difficulty, category, tags; [agent] and
[verifier] timeout_sec; [environment] build_timeout_sec, cpus, memory_mb / memory, storage_mb
(recorded). Everything below is named in a warning with what ci-eval does instead."""

from __future__ import annotations

import re

# key -> what ci-eval does with it (docs/docker.md "Harbor tasks")
ENVIRONMENT_KEYS = {
    "allow_internet": "the verifier has no network whatever the task says, the agent's container "
                      "the engine's default (a bridge-less engine gives neither any): the tools "
                      "test.sh installs come from CI_EVAL_VERIFIER_TOOLS or the image "
                      "(docs/docker.md)",
    "mcp_servers": "MCP servers are not started or given to the agent",
    "skills_dir": "skills are not installed for the agent (copy them into the task's harness "
                  "files, e.g. .claude/skills/, if the agent should see them)",
    "env": "environment variables are not set in the containers",
    "gpus": "no GPU is given to the containers",
    "gpu_types": "no GPU is given to the containers",
    "docker_image": "the prebuilt image is not pulled: environment/Dockerfile is built",
    "workdir": "the workspace is the image's WORKDIR",
    "network_mode": "containers get the engine's default network (agent) or none (verifier)",
}
KNOWN = {
    "": {"version", "schema_version", "metadata", "task", "agent", "verifier", "environment",
         "solution"},
    "agent": {"timeout_sec"},
    "verifier": {"timeout_sec"},
    "environment": {"build_timeout_sec", "cpus", "memory_mb", "memory", "storage_mb",
                    "storage"},
    "solution": set(),
}
OTHER_KEYS = {
    "artifacts": "artifacts are not collected (the run's diff and logs are kept)",
    "env": "environment variables are not set",
    "user": "runs as the image's USER (metadata.json docker.user to change it)",
}
COMPOSE_FILES = ("environment/docker-compose.yaml", "environment/docker-compose.yml",
                 "environment/compose.yaml", "environment/compose.yml")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_INSTALLS = re.compile(r"\b(apt-get install|apt install|apk add|pip3? install|uvx|curl|wget|"
                       r"npm install|astral\.sh/uv)\b")
_MB = {"k": 1 / 1024, "": 1, "m": 1, "g": 1024, "t": 1024 * 1024}


def memory_mb(value) -> int | None:
    """Harbor's `memory` ("2G", "512M", "1.5Gi", or a number of MB) in MB; None if unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        found = _SIZE.match(str(value))
        if not found:
            return None
        number, unit = float(found.group(1)), found.group(2).lower()
    megabytes = int(number * _MB[unit])
    return megabytes if 0 < megabytes <= 1048576 else None


# what Harbor's containers may do (the engine's default capabilities) and ci-eval's drop, for
# the scripts that need it: user and ownership changes
_NEEDS_CAPABILITIES = re.compile(r"\b(useradd|adduser|groupadd|addgroup|usermod|chown|chgrp|"
                                 r"su|sudo|runuser|setpriv|gosu)\b")
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID"]


def capabilities(files: dict[str, bytes]) -> list[str]:
    """The capabilities the task's scripts (solve.sh, test.sh, environment/ scripts) need back
    from --cap-drop ALL: CAPABILITIES when one of them changes users or owners, else none."""
    scripts = [data for name, data in files.items() if name.endswith(".sh")]
    text = b"\n".join(scripts).decode("utf-8", errors="replace")
    return list(CAPABILITIES) if _NEEDS_CAPABILITIES.search(text) else []


def unsupported(data: dict, files: dict[str, bytes]) -> list[str]:
    """One warning per key or file of the task that is not carried over, naming it."""
    found = []
    for table, known in KNOWN.items():
        section = data if not table else data.get(table, {})
        if not isinstance(section, dict):
            continue
        for key in sorted(section):
            where = f"[{table}].{key}" if table else key
            if key in known or (not table and key in ("metadata", "task")):
                continue
            if table == "environment" and key in ENVIRONMENT_KEYS:
                value = section[key]
                if key == "gpus" and value in (0, None):
                    continue
                if key == "mcp_servers" and not value:
                    continue
                if key == "allow_internet" and value is False:
                    continue  # carried over: docker.agent_network "none" (harbor.py)
                found.append(f"{where} not supported: {ENVIRONMENT_KEYS[key]}")
            elif key in OTHER_KEYS:
                found.append(f"{where} not supported: {OTHER_KEYS[key]}")
            else:
                found.append(f"{where} is not a key ci-eval knows: ignored")
    test_sh = files.get("tests/test.sh", b"").decode("utf-8", errors="replace")
    installs = sorted({m.group(0).strip() for m in _INSTALLS.finditer(test_sh)})
    if installs:
        found.append(f"tests/test.sh installs tools when it runs ({', '.join(installs)}): the "
                     "checks container has no network: give it uv and the wheels it asks for "
                     "with CI_EVAL_VERIFIER_TOOLS, or bake them into environment/Dockerfile "
                     "(docs/docker.md \"Harbor tasks\")")
    return found
