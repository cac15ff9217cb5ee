"""A Harbor task's environment/docker-compose.yaml, read strictly into metadata.json's
docker.services (the sidecars the docker runner starts beside the task's container). Pure: the
file's bytes in, (services, warnings) out.

Harbor merges the file over its own compose config: `main` is the task's container (built from
environment/Dockerfile), every other service a sidecar it reaches by the service's name. Carried
over for a sidecar: image or build (context and dockerfile inside environment/), environment,
command, entrypoint, healthcheck (waited for before anything runs); expose and depends_on need
nothing (every port is reachable on the task's private network; all sidecars are up, the ones
with a healthcheck healthy, before the task's container starts). Everything else is named in a
warning with what ci-eval does instead; what would reach the host (volumes, ports, privileged,
cap_add, devices, network_mode...) is never applied (docs/docker.md "Harbor tasks").
"""

from __future__ import annotations

import posixpath
import re
import shlex

from ci_eval.errors import UserError
from ci_eval.strict_yaml import parse_yaml

MAIN = "main"
ENVIRONMENT = "environment"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|h|m|s)")
_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
MAX_SERVICES = 8
MAX_SECONDS = 3600.0
MAX_RETRIES = 1000
_NEEDS_NOTHING = {"expose", "depends_on", "restart", "init", "stop_grace_period",
                  "stop_signal", "container_name", "hostname", "labels", "logging"}
_NEVER = {  # what would give a sidecar the host, or more than the task's own container has
    "volumes": "no host or named volumes are mounted",
    "ports": "no port is published to the host (the task's container reaches every port)",
    "privileged": "sidecars are never privileged",
    "cap_add": "sidecars get the task's capabilities only (docker.capabilities)",
    "devices": "no device is given",
    "network_mode": "sidecars are on the task's private network only",
    "networks": "sidecars are on the task's private network only (no egress)",
    "pid": "sidecars get their own process namespace",
    "ipc": "sidecars get their own IPC namespace",
    "security_opt": "sidecars run with no-new-privileges and the engine's default profiles",
    "extra_hosts": "the private network's DNS names the services",
    "env_file": "no file of the host is read (put the variables in environment)",
    "user": "sidecars run as their image's USER",
    "volumes_from": "no volumes are shared",
    "sysctls": "the engine's defaults",
}
_TOP_IGNORED = {"version", "name"}
# compose's interpolation: $$ is a $, ${NAME:-default} / ${NAME-default} the default, ${NAME}
# and $NAME the host's variable (here: empty, warned: nothing of the host reaches a sidecar)
_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def compose_services(data: bytes, source: str) -> tuple[list[dict], list[str]]:
    """(docker.services entries, warnings) from the compose file's bytes; UserError naming
    `source` (the file) and the field for what cannot be read at all."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", path=source) from None
    document = parse_yaml(text, source)
    if not isinstance(document, dict) or not isinstance(document.get("services"), dict):
        raise UserError("expected a mapping with a `services` mapping", path=source,
                        field="services")
    warnings = [f"{source}: {key} not supported: ignored (sidecars get no host volumes, "
                "networks, configs or secrets)" for key in sorted(map(str, document))
                if key != "services" and key not in _TOP_IGNORED and not key.startswith("x-")]
    services = []
    document = _interpolated(document, source, warnings)
    for name, spec in document["services"].items():
        where = f"services.{name}"
        if not isinstance(spec, dict):
            raise UserError("expected a mapping", path=source, field=where)
        if name == MAIN:
            warnings += [f"{source}: {where}.{key} not applied: the task's container is "
                         "environment/Dockerfile's image as ci-eval runs it" for key in
                         sorted(map(str, spec)) if key != "depends_on"]
            continue
        if not isinstance(name, str) or not _NAME.match(name):
            raise UserError("expected a service name of lower-case letters, digits, '_', '.' "
                            "and '-'", path=source, field=where)
        services.append(_service(name, spec, source, warnings))
    if len(services) > MAX_SERVICES:
        raise UserError(f"{len(services)} sidecars: at most {MAX_SERVICES}", path=source,
                        field="services")
    return services, warnings


def _interpolated(value, source: str, warnings: list[str]):
    """`value` with compose's interpolation done in every string (keys stay as they are)."""
    if isinstance(value, dict):
        return {key: _interpolated(item, source, warnings) for key, item in value.items()}
    if isinstance(value, list):
        return [_interpolated(item, source, warnings) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(found: re.Match) -> str:
        if found.group(0) == "$$":
            return "$"
        if found.group(2) is not None:
            return found.group(2)
        variable = found.group(1) or found.group(3)
        warnings.append(f"{source}: ${{{variable}}} is empty: compose takes it from the host's "
                        "environment, ci-eval passes nothing of the host to a sidecar")
        return ""

    return _VARIABLE.sub(substitute, value)


def _service(name: str, spec: dict, source: str, warnings: list[str]) -> dict:
    where = f"services.{name}"
    found: dict = {"name": name}
    if "build" in spec:
        found["build"] = _build(spec["build"], source, f"{where}.build", warnings)
    elif isinstance(spec.get("image"), str) and spec["image"].strip():
        found["image"] = spec["image"].strip()
    else:
        raise UserError("expected `image` (a name) or `build`", path=source, field=where)
    if "environment" in spec:
        found["environment"] = _environment(spec["environment"], source, f"{where}.environment")
    for key in ("command", "entrypoint"):
        if spec.get(key) is not None:
            found[key] = _argv(spec[key], source, f"{where}.{key}")
    if "healthcheck" in spec:
        check = _healthcheck(spec["healthcheck"], source, f"{where}.healthcheck")
        if check:
            found["healthcheck"] = check
    for key in sorted(map(str, spec)):
        if key in ("build", "image", "environment", "command", "entrypoint", "healthcheck"):
            continue
        if key in _NEVER:
            warnings.append(f"{source}: {where}.{key} not applied: {_NEVER[key]}")
        elif key not in _NEEDS_NOTHING and not key.startswith("x-"):
            warnings.append(f"{source}: {where}.{key} is not a key ci-eval supports: ignored")
    return found


def _build(build, source: str, where: str, warnings: list[str]) -> dict:
    """{"context": a folder under environment/, "dockerfile": its path in that folder}."""
    if isinstance(build, str):
        build = {"context": build}
    if not isinstance(build, dict) or not isinstance(build.get("context", "."), str):
        raise UserError("expected a context folder or {context, dockerfile}", path=source,
                        field=where)
    context = _inside(build.get("context", "."), ENVIRONMENT, source, f"{where}.context")
    dockerfile = build.get("dockerfile", "Dockerfile")
    if not isinstance(dockerfile, str):
        raise UserError("expected a path", path=source, field=f"{where}.dockerfile")
    dockerfile = _inside(dockerfile, context, source, f"{where}.dockerfile")
    for key in sorted(map(str, build)):
        if key not in ("context", "dockerfile"):
            warnings.append(f"{source}: {where}.{key} not supported: ignored (the context's "
                            "Dockerfile is built as it is)")
    return {"context": context, "dockerfile": posixpath.relpath(dockerfile, context)}


def _inside(relative: str, base: str, source: str, where: str) -> str:
    joined = posixpath.normpath(posixpath.join(base, relative))
    if relative.startswith("/") or not (joined == base or joined.startswith(base + "/")) or (
            "://" in relative):
        raise UserError(f"expected a path inside {base}/, got {relative!r}", path=source,
                        field=where)
    return joined


def _environment(value, source: str, where: str) -> dict[str, str]:
    """A mapping, or a list of NAME=value (a bare NAME, taken from the host by compose, is
    refused: nothing of the host's environment reaches a sidecar)."""
    if isinstance(value, list):
        pairs = {}
        for item in value:
            if not isinstance(item, str) or "=" not in item:
                raise UserError(f"expected NAME=value, got {item!r} (nothing of the host's "
                                "environment is passed)", path=source, field=where)
            key, _, text = item.partition("=")
            pairs[key] = text
        value = pairs
    if not isinstance(value, dict):
        raise UserError("expected a mapping or a list of NAME=value", path=source, field=where)
    found = {}
    for key, text in value.items():
        if not isinstance(key, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key) or (
                text is None or isinstance(text, (dict, list))):
            raise UserError(f"expected NAME: value, got {key!r}", path=source, field=where)
        found[key] = str(text).lower() if isinstance(text, bool) else str(text)
    return found


def _argv(value, source: str, where: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as exc:
            raise UserError(f"cannot split the command: {exc}", path=source, field=where) from None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise UserError("expected a command (a string or a list of strings)", path=source,
                        field=where)
    return value


def _healthcheck(value, source: str, where: str) -> dict | None:
    """{"test": argv, "interval_seconds", "timeout_seconds", "retries", "start_period_seconds"}
    with compose's defaults (30s, 30s, 3, 0s); None when disabled."""
    if not isinstance(value, dict):
        raise UserError("expected a mapping", path=source, field=where)
    test = value.get("test")
    if value.get("disable") is True or test in (["NONE"], None):
        return None
    if isinstance(test, str):
        test = ["CMD-SHELL", test]
    if not isinstance(test, list) or len(test) < 2 or not all(isinstance(t, str) for t in test) \
            or test[0] not in ("CMD", "CMD-SHELL"):
        raise UserError("expected test: [\"CMD\", ...], [\"CMD-SHELL\", \"...\"] or a string",
                        path=source, field=f"{where}.test")
    argv = test[1:] if test[0] == "CMD" else ["/bin/sh", "-c", " ".join(test[1:])]
    retries = value.get("retries", 3)
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 < retries <= MAX_RETRIES:
        raise UserError(f"expected a whole number from 1 to {MAX_RETRIES}", path=source,
                        field=f"{where}.retries")
    return {"test": argv, "retries": retries, **{
        f"{key}_seconds": _duration(value.get(key, default), source, f"{where}.{key}")
        for key, default in (("interval", "30s"), ("timeout", "30s"), ("start_period", "0s"))}}


def _duration(value, source: str, where: str) -> float:
    """Compose's durations ("2s", "1m30s", "500ms"; a bare number is seconds)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and re.fullmatch(rf"(?:{_DURATION.pattern})+", value.strip()):
        seconds = sum(float(n) * _SECONDS[u] for n, u in _DURATION.findall(value))
    else:
        raise UserError(f"expected a duration such as \"2s\" or \"1m30s\", got {value!r}",
                        path=source, field=where)
    if not 0 <= seconds <= MAX_SECONDS:
        raise UserError(f"expected at most {MAX_SECONDS:g}s, got {value!r}", path=source,
                        field=where)
    return seconds
