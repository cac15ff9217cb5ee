"""ci-eval.schema.json: the contract of ci-eval.yaml. `ci-eval schema ci-eval.yaml` prints it,
parse_config checks it (a typo in ANY key, at any depth, is one line with a did-you-mean), the
code's Literal types are its enums, init's ci-eval.yaml points editors at it and validates."""

from __future__ import annotations

import json
import subprocess
import typing

import jsonschema
import pytest
import yaml

from ci_eval.agents import config, config_file
from ci_eval.agents.config_file import parse_config
from ci_eval.errors import UserError
from ci_eval.tasks import schema
from ci_eval.verdict.rules import AXES, DRIFT_POLICIES

SCHEMA = schema.load_schema("ci-eval")

# Every key ci-eval.yaml knows, each with a valid value.
EVERY_KEY = {
    "default_agent": "claude",
    "agents": {
        "claude": {"preset": "claude-code", "model": "claude-sonnet-4-5", "args": ["--x", 3],
                   "base_url": "http://127.0.0.1:8080/v1", "timeout_seconds": 900,
                   "env": ["EXTRA"], "home": "host", "network": "api-only",
                   "allow_hosts": ["registry.npmjs.org", "gw.internal:8443"],
                   "harness": ["CLAUDE.md", {"path": "skills", "home": ".claude/skills"}]},
        "mine": {"command": ["python3", "agent.py"], "usage": "none", "placement": "container",
                 "network": "host"},
    },
    "checks": {"env": ["MY_TOOL_HOME"], "home": "run"},
    "budget": {"max_cost_usd": 20, "max_cost_usd_per_run": 2.5, "max_runs": 50},
    "pricing": {"gpt-5": {"input": 1.25, "cached_input": 0.125, "cache_write": 1.5,
                          "output": 10}},
    "failure_logs": "logs/failures",
    "runner": "docker",
    "gate": {"regression_threshold": 0.3, "min_baseline_rate": 0.6, "drift": "fail",
             "drift_refresh_after": 5,
             "cost": {"max_increase": 0.5, "fail": True}, "tokens": {"max_increase": 1},
             "wall": {"fail": False}},
}


def _key_paths(node: dict, data: dict, path: tuple = ()):
    """(path to a mapping in EVERY_KEY, one of its keys) for every key the schema declares."""
    node = schema._deref(node, SCHEMA)
    for key, child in (node.get("properties") or {}).items():
        if key not in data:
            continue  # an agent's command or preset: the other entry has it
        yield path, key
        if isinstance(data[key], dict):
            yield from _key_paths(child, data[key], path + (key,))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        for name, value in data.items():
            if isinstance(value, dict):
                yield from _key_paths(extra, value, path + (name,))


KEY_PATHS = sorted(set(_key_paths(SCHEMA, EVERY_KEY)))


def _typo(key: str) -> str:
    """A likely slip of the fingers: two letters swapped."""
    i = next(i for i in range(1 if len(key) > 2 else 0, len(key) - 1) if key[i] != key[i + 1])
    return key[:i] + key[i + 1] + key[i] + key[i + 2:]


def test_every_key_is_valid_and_parsed():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert schema.schema_problems(EVERY_KEY, "ci-eval") == []
    parsed = parse_config(EVERY_KEY, "ci-eval.yaml")
    assert parsed.runner == "docker" and parsed.gate.drift == "fail"
    assert parsed.gate.drift_refresh_after == 5
    assert parsed.agents["claude"].network == "api-only" and parsed.agents["mine"].usage == "none"
    assert parsed.pricing["gpt-5"].cache_write == 1.5 and parsed.budget.max_runs == 50
    declared = set()

    def walk(node):
        node = schema._deref(node, SCHEMA)
        if isinstance(node, dict):
            declared.update(node.get("properties") or {})
            for child in (*(node.get("properties") or {}).values(), node.get("additionalProperties")):
                walk(child)
    walk(SCHEMA)
    assert declared - {"path"} == {key for _, key in KEY_PATHS}  # path: a harness entry's


@pytest.mark.parametrize("where, key", KEY_PATHS, ids=[".".join((*p, k)) for p, k in KEY_PATHS])
def test_a_typo_in_any_key_is_one_line_with_a_did_you_mean(where, key):
    data = json.loads(json.dumps(EVERY_KEY))
    mapping = data
    for part in where:
        mapping = mapping[part]
    mapping[_typo(key)] = mapping.pop(key)
    with pytest.raises(UserError) as caught:
        parse_config(data, "ci-eval.yaml")
    text = str(caught.value)
    dotted = ".".join((*where, _typo(key)))
    assert text.startswith(f"ci-eval.yaml: {dotted}: unknown key (did you mean {key!r}? "
                           "known: "), text
    assert "\n" not in text


def test_the_literal_types_are_the_schemas_enums():
    agent = SCHEMA["$defs"]["agent"]["properties"]
    assert set(typing.get_args(config.Placement)) == set(agent["placement"]["enum"])
    assert set(typing.get_args(config.UsageMode)) == set(agent["usage"]["enum"])
    assert set(typing.get_args(config.NetworkMode)) == set(agent["network"]["enum"])
    assert set(typing.get_args(config.HomeMode)) == set(SCHEMA["$defs"]["home"]["enum"])
    assert set(typing.get_args(config_file.RunnerName)) == \
        set(SCHEMA["properties"]["runner"]["enum"]) - {None}
    gate = SCHEMA["properties"]["gate"]["properties"]
    assert set(gate["drift"]["enum"]) == set(DRIFT_POLICIES)
    assert set(AXES) <= set(gate)


@pytest.mark.parametrize("name", ["ci-eval.yaml", "ci-eval"])
def test_ci_eval_schema_prints_it(cli, name, tmp_path):
    done = cli("schema", name)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == SCHEMA
    listed = cli("schema")
    assert "ci-eval" in listed.stdout.split()
    out = tmp_path / "s.json"
    assert cli("schema", "ci-eval.yaml", "-o", out).returncode == 0
    assert json.loads(out.read_text()) == SCHEMA


def test_init_points_editors_at_the_schema_and_its_file_validates(tmp_path, cli):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = cli("init", "--agent", "codex", "--action", "acme/ci-eval/sub@v2.1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "ci-eval.yaml").read_text()
    assert text.splitlines()[0] == (
        "# yaml-language-server: $schema=https://raw.githubusercontent.com/acme/ci-eval/v2.1/"
        "ci_eval/tasks/schemas/ci-eval.schema.json")
    jsonschema.validate(yaml.safe_load(text), SCHEMA)


@pytest.mark.parametrize("data, message", [
    ({"runner": "k8s"}, "runner: expected one of local, docker, got \"k8s\""),
    ({"agents": {"a": {"command": "x", "network": "none"}}},
     "agents.a.network: expected one of host, api-only, got \"none\""),
    ({"agents": {"a": {"command": "x", "placement": "vm"}}},
     "agents.a.placement: expected one of host, container, got \"vm\""),
    ({"agents": {"a": {"command": "x", "allow_hosts": ["a b"]}}}, "agents.a.allow_hosts[0]: "),
    ({"agents": {"a": {"command": "x", "harness": [{"path": "a", "where": "b"}]}}},
     "agents.a.harness[0].where: unknown key (known: path, home)"),
    ({"gate": {"wall": {"fail": "yes"}}}, "gate.wall.fail: expected true or false, got \"yes\""),
    ({"gate": {"regression_threshold": 1}},
     "gate.regression_threshold: expected a number >= 0 and < 1, got 1"),
    ({"failure_logs": " "}, "failure_logs: expected a folder path, got \" \""),
    ({"budget": {"max_runs": 2.5}}, "budget.max_runs: expected a whole number >= 1, got 2.5"),
    ({"agents": {"a": {"command": "x", "timeout_seconds": 86401}}},
     "agents.a.timeout_seconds: expected at most 86400 seconds (24 h), got 86401"),
])
def test_a_bad_value_names_the_key_and_what_it_expects(data, message):
    with pytest.raises(UserError) as caught:
        parse_config(data, "ci-eval.yaml")
    assert str(caught.value).startswith(f"ci-eval.yaml: {message}"), str(caught.value)


def test_the_pricing_synonyms_say_what_was_meant():
    data = {"pricing": {"m": {"input": 1, "output": 2, "completion": 3}}}
    with pytest.raises(UserError, match=r"pricing\.m\.completion: unknown key \(did you mean "
                       r"'output'\?"):
        parse_config(data, "ci-eval.yaml")
