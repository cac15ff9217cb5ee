"""environment/docker-compose.yaml read strictly (ci_eval/importers/harbor_compose.py) and a
sidecar's `docker run` argv (ci_eval/run/docker/sidecars.py): every refusal names the file and
the field; every key not carried over is named in a warning; nothing of the host's is passed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ci_eval.errors import UserError
from ci_eval.importers.harbor_compose import compose_services
from ci_eval.importers.harbor_keys import mcp_warnings, skills_warning
from ci_eval.run.docker.containers import ContainerSpec, run_argv
from ci_eval.run.docker.settings import DockerSettings
from ci_eval.run.docker.sidecars import health_argv, service_argv

SOURCE = "task/environment/docker-compose.yaml"
FIXTURE = Path(__file__).parent / "fixtures" / "harbor-compose" / "web-sidecar"


def read(text: str):
    return compose_services(text.encode(), SOURCE)


def refused(text: str | bytes) -> UserError:
    with pytest.raises(UserError) as caught:
        compose_services(text if isinstance(text, bytes) else text.encode(), SOURCE)
    assert SOURCE in str(caught.value)
    return caught.value


def test_a_full_service_is_carried_over():
    services, warnings = read("""
services:
  db:
    image: postgres:16
    environment:
      - POSTGRES_PASSWORD=secret
      - EMPTY=
    entrypoint: docker-entrypoint.sh
    command: postgres -c 'max_connections=20'
    healthcheck:
      test: pg_isready -U postgres
      interval: 1m30s
      timeout: 500ms
      start_period: 2
      retries: 4
    expose: ["5432"]
    restart: always
x-common: {a: 1}
version: "3.8"
""")
    assert warnings == []
    assert services == [{
        "name": "db", "image": "postgres:16",
        "environment": {"POSTGRES_PASSWORD": "secret", "EMPTY": ""},
        "entrypoint": ["docker-entrypoint.sh"],
        "command": ["postgres", "-c", "max_connections=20"],
        "healthcheck": {"test": ["/bin/sh", "-c", "pg_isready -U postgres"], "retries": 4,
                        "interval_seconds": 90.0, "timeout_seconds": 0.5,
                        "start_period_seconds": 2.0}}]


def test_defaults_disabled_healthchecks_and_build_forms():
    services, _ = read("""
services:
  a: {build: ./side, healthcheck: {test: ["CMD", "true"]}}
  b: {build: {context: side, dockerfile: docker/Dockerfile.web}, healthcheck: {disable: true}}
  c: {image: x, healthcheck: {test: ["NONE"]}, environment: {FLAG: true, N: 3}}
""")
    a, b, c = services
    assert a["build"] == {"context": "environment/side", "dockerfile": "Dockerfile"}
    assert a["healthcheck"] == {"test": ["true"], "retries": 3, "interval_seconds": 30.0,
                                "timeout_seconds": 30.0, "start_period_seconds": 0.0}
    assert b["build"]["dockerfile"] == "docker/Dockerfile.web" and "healthcheck" not in b
    assert "healthcheck" not in c and c["environment"] == {"FLAG": "true", "N": "3"}


def test_what_would_reach_the_host_is_named_and_not_carried_over():
    services, warnings = read("""
services:
  main:
    depends_on: [web]
    volumes: ["/:/host"]
  web:
    image: nginx
    volumes: ["/var/run/docker.sock:/var/run/docker.sock"]
    ports: ["80:80"]
    privileged: true
    cap_add: [SYS_ADMIN]
    devices: ["/dev/kvm"]
    network_mode: host
    pid: host
    env_file: .env
    colour: red
    build_args: {}
volumes: {data: {}}
networks: {outside: {}}
""")
    assert services == [{"name": "web", "image": "nginx"}]
    said = "\n".join(warnings)
    for key in ("services.main.volumes not applied", "services.web.volumes not applied",
                "services.web.ports not applied", "services.web.privileged not applied",
                "services.web.cap_add not applied", "services.web.devices not applied",
                "services.web.network_mode not applied", "services.web.pid not applied",
                "services.web.env_file not applied", "services.web.colour is not a key",
                f"{SOURCE}: volumes not supported", f"{SOURCE}: networks not supported"):
        assert key in said, (key, said)
    assert "depends_on" not in said


def test_interpolation_as_compose_does_it_without_the_host():
    services, warnings = read("""
services:
  web:
    image: "nginx:${TAG:-1.27}"
    command: ["sh", "-c", "echo $$HOME ${HOME} $USER ${X-fallback}"]
""")
    assert services[0]["image"] == "nginx:1.27"
    assert services[0]["command"][2] == "echo $HOME   fallback"
    assert any("${HOME} is empty" in w for w in warnings)
    assert any("${USER} is empty" in w for w in warnings)


@pytest.mark.parametrize("text, field", [
    (b"\xff\xfe", None),
    ("services: [", "line"),
    ("services:\n  a: {image: x}\n  a: {image: y}\n", "line 3"),
    ("- a\n", "services"),
    ("services: [a]\n", "services"),
    ("services:\n  a: 3\n", "services.a"),
    ("services:\n  Bad_Name: {image: x}\n", "services.Bad_Name"),
    ("services:\n  a: {environment: {}}\n", "services.a"),
    ("services:\n  a: {image: '  '}\n", "services.a"),
    ("services:\n  a: {build: ../../outside}\n", "services.a.build.context"),
    ("services:\n  a: {build: /etc}\n", "services.a.build.context"),
    ("services:\n  a: {build: 'https://example.com/repo.git'}\n", "services.a.build.context"),
    ("services:\n  a: {build: {context: x, dockerfile: ../../Dockerfile}}\n",
     "services.a.build.dockerfile"),
    ("services:\n  a: {build: {context: x, dockerfile: 3}}\n", "services.a.build.dockerfile"),
    ("services:\n  a: {build: 3}\n", "services.a.build"),
    ("services:\n  a: {image: x, environment: [HOME]}\n", "services.a.environment"),
    ("services:\n  a: {image: x, environment: {'bad-name': 1}}\n", "services.a.environment"),
    ("services:\n  a: {image: x, environment: {A: [1]}}\n", "services.a.environment"),
    ("services:\n  a: {image: x, environment: 3}\n", "services.a.environment"),
    ("services:\n  a: {image: x, command: []}\n", "services.a.command"),
    ("services:\n  a: {image: x, command: [1]}\n", "services.a.command"),
    ("services:\n  a: {image: x, entrypoint: \"sh -c 'unclosed\"}\n", "services.a.entrypoint"),
    ("services:\n  a: {image: x, healthcheck: yes}\n", "services.a.healthcheck"),
    ("services:\n  a: {image: x, healthcheck: {test: [CMD]}}\n", "services.a.healthcheck.test"),
    ("services:\n  a: {image: x, healthcheck: {test: [RUN, x]}}\n", "services.a.healthcheck.test"),
    ("services:\n  a: {image: x, healthcheck: {test: x, retries: 0}}\n",
     "services.a.healthcheck.retries"),
    ("services:\n  a: {image: x, healthcheck: {test: x, retries: true}}\n",
     "services.a.healthcheck.retries"),
    ("services:\n  a: {image: x, healthcheck: {test: x, interval: soon}}\n",
     "services.a.healthcheck.interval"),
    ("services:\n  a: {image: x, healthcheck: {test: x, timeout: 2h}}\n",
     "services.a.healthcheck.timeout"),
    ("services:\n" + "".join(f"  s{i}: {{image: x}}\n" for i in range(9)), "services"),
])
def test_what_cannot_be_read_is_refused_naming_the_field(text, field):
    error = refused(text)
    if field:
        assert field in str(error), str(error)


def test_a_service_s_run_argv_passes_nothing_of_the_host():
    settings = DockerSettings(memory_mb=256, cpus=0.5, pids=64, capabilities=("CHOWN",))
    service = {"name": "db", "image": "x", "environment": {"A": "1"},
               "entrypoint": ["/e", "-v"], "command": ["serve"],
               "healthcheck": {"test": ["pg_isready"]}}
    argv = service_argv(service, "img:1", "ci-eval-001-db-abc", "net-1", settings,
                        {"ci-eval.task": "t"})
    assert argv[:7] == ["run", "--detach", "--name", "ci-eval-001-db-abc", "--network", "net-1",
                        "--network-alias"]
    assert argv[-5:] == ["--entrypoint", "/e", "img:1", "-v", "serve"]
    for flag in ("--cap-drop ALL", "--cap-add CHOWN", "--security-opt no-new-privileges",
                 "--pids-limit 64", "--memory 256m", "--memory-swap 256m", "--cpus 0.5",
                 "--env A=1", "--label ci-eval.task=t"):
        assert flag in " ".join(argv), flag
    for never in ("--privileged", "--publish", "-p", "--mount", "--volume", "-v /"):
        assert never not in argv[:-5], never
    assert service_argv({"name": "db", "image": "x"}, "img:1", "n", "net", settings, {})[-1:] == [
        "img:1"]
    assert health_argv("n", service) == ["exec", "n", "pg_isready"]


def test_containers_on_the_internal_network_give_up_on_outside_names_in_seconds():
    # the engine's DNS never answers an outside name there on engines before 25.0: glibc's
    # default would wait 5 s x 2 attempts per name (80 s for an apt-get update)
    fast = "--dns-option timeout:1 --dns-option attempts:2"
    sidecar = service_argv({"name": "db", "image": "x"}, "img:1", "n", "net", DockerSettings(), {})
    assert fast in " ".join(sidecar)
    task = run_argv(ContainerSpec("img", "c1", ("sh", "/tests/test.sh"), "/w", network="net",
                                  internal_network=True))
    assert fast in " ".join(task) and task[task.index("--network") + 1] == "net"
    for network in ("none", None):  # no network: nothing to wait for; the engine's: its DNS
        alone = run_argv(ContainerSpec("img", "c2", ("true",), "/w", network=network))
        assert "--dns-option" not in alone


def test_a_bad_compose_file_is_bad_input_at_import(tmp_path, cli, repo_root):
    source = tmp_path / "web-sidecar"
    shutil.copytree(FIXTURE, source)
    (source / "environment" / "docker-compose.yaml").write_text(
        "services:\n  web:\n    build: ../../../etc\n")
    result = cli("import", "harbor", source, "--into", repo_root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "docker-compose.yaml" in result.stderr and "services.web.build.context" in result.stderr
    assert "Traceback" not in result.stderr and list((repo_root / "tasks").iterdir()) == []


@pytest.mark.parametrize("service, field", [
    ({"name": "main", "image": "x"}, "docker.services[0].name"),
    ({"name": "web", "build": {"context": "environment/../..", "dockerfile": "Dockerfile"}},
     "docker.services[0].build.context"),
    ({"name": "web", "image": "x", "volumes": ["/:/host"]}, "docker.services[0]"),
    ({"name": "web"}, "docker.services[0]"),
])
def test_validate_refuses_a_hand_edited_service(tmp_path, cli, repo_root, service, field):
    imported = cli("import", "harbor", FIXTURE, "--into", repo_root, "--json")
    assert imported.returncode == 0, imported.stderr
    metadata_path = next((repo_root / "tasks").glob("*/metadata.json"))
    metadata = json.loads(metadata_path.read_text())
    metadata["docker"]["services"] = [service]
    metadata_path.write_text(json.dumps(metadata))
    result = cli("validate", cwd=repo_root)
    assert result.returncode != 0 and field in result.stdout + result.stderr, (
        result.stdout + result.stderr)


def test_each_mcp_server_is_named_with_where_it_runs():
    found = mcp_warnings([
        {"name": "tools", "transport": "streamable-http", "url": "http://tools:8000/mcp"},
        {"name": "remote", "transport": "sse", "url": "https://mcp.example.com/sse"},
        {"name": "local", "command": "npx", "args": ["server"]},
        "not a table",
    ], ("tools",))
    assert len(found) == 4
    assert found[0].startswith("[environment].mcp_servers 'tools' (streamable-http) not given")
    assert "its server is the sidecar tools (started, reachable at http://tools:8000/mcp" in found[0]
    assert "nothing here serves https://mcp.example.com/sse (no sidecar is named mcp.example.com)" \
        in found[1]
    assert "'local' (stdio)" in found[2] and "its command is not run" in found[2]
    assert "'?'" in found[3]
    assert all("configures no MCP client" in w and ".mcp.json" in w for w in found)
    assert mcp_warnings({"name": "one", "url": "http://x/"}, ())[0].count("[environment]") == 1


def test_skills_dir_says_where_the_skills_stay():
    said = skills_warning("/skills")
    assert said.startswith("[environment].skills_dir '/skills' not supported")
    assert ".claude/skills/" in said and "docs/harness.md" in said
