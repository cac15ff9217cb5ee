"""What of a Harbor task.toml (and its environment/) the import cannot carry over, said at import
naming the key, and Harbor's memory sizes ("2G"). Pure: the parsed TOML and the file tree in.

Carried over by ci_eval/importers/harbor.py: [metadata] difficulty, category, tags; [agent] and
[verifier] timeout_sec; [environment] build_timeout_sec, cpus, memory_mb / memory, storage_mb
(recorded). Everything below is named in a warning with what ci-eval does instead."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# key -> what ci-eval does with it (docs/docker.md "Harbor tasks")
ENVIRONMENT_KEYS = {
    "allow_internet": "the verifier has no network whatever the task says, the agent's container "
                      "the engine's default (a bridge-less engine gives neither any): the tools "
                      "test.sh installs come from CI_EVAL_VERIFIER_TOOLS or the image "
                      "(docs/docker.md)",
    "mcp_servers": "(one warning per server: mcp_warnings)",
    "skills_dir": "(skills_warning)",
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


def unsupported(data: dict, files: dict[str, bytes], services: tuple[str, ...] = ()) -> list[str]:
    """One warning per key or file of the task that is not carried over, naming it; `services`:
    the names of the task's sidecars (an MCP server may be one of them)."""
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
                if key == "mcp_servers":
                    found.extend(mcp_warnings(value, services))
                    continue
                if key == "skills_dir":
                    found.append(skills_warning(value))
                    continue
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


def mcp_warnings(servers, services: tuple[str, ...]) -> list[str]:
    """One warning per [[environment.mcp_servers]] entry: its name, transport and URL or
    command, and where its server runs here (a sidecar, or nowhere)."""
    if not isinstance(servers, list):
        servers = [servers]
    found = []
    for server in servers:
        server = server if isinstance(server, dict) else {}
        name = str(server.get("name", "?"))[:60]
        url = str(server.get("url", ""))[:200]
        transport = str(server.get("transport", "stdio" if "command" in server else "?"))[:30]
        host = urlsplit(url).hostname if url else None
        if host and host in services:
            where = (f"its server is the sidecar {host} (started, reachable at {url} from the "
                     "task's containers)")
        elif url:
            where = f"nothing here serves {url} (no sidecar is named {host})"
        else:
            where = "its command is not run"
        found.append(f"[environment].mcp_servers {name!r} ({transport}) not given to the agent: "
                     f"ci-eval configures no MCP client; {where}; for an agent placed in the "
                     "container, name the server in its harness files (e.g. .mcp.json for "
                     "claude-code; docs/harness.md)")
    return found


def skills_warning(path) -> str:
    """[environment].skills_dir: where the skills are in the image, not installed for agents."""
    return (f"[environment].skills_dir {str(path)[:200]!r} not supported: the skills stay where "
            "the image has them, not installed into the agent's skills folder as Harbor does "
            "(e.g. ~/.claude/skills/): for an agent to see them, put them in the task's "
            "harness files (.claude/skills/; docs/harness.md)")
