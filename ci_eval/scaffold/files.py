"""Everything `ci-eval init` writes, planned before anything is written: ci-eval.yaml (its
agent, the --model entry, the harness the repo holds), an empty baseline.json, the workflows
(scaffold/workflows.py) and the example task (templates/task/); then written, every clash and
folder problem refused first."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from ci_eval.agents import presets
from ci_eval.agents.config import AgentConfig
from ci_eval.agents.config_file import parse_config, resolve_agent
from ci_eval.agents.harness import agent_harness
from ci_eval.errors import UserError
from ci_eval.output import ensure_dir, write_atomic
from ci_eval.scaffold.next_steps import harness_step, next_steps
from ci_eval.scaffold import ACTION_REF, EXAMPLE_TASK, WORKFLOWS
from ci_eval.scaffold.workflows import agent_env_block, agent_install_block, render_workflow
from ci_eval.tasks.load import load_tasks
from ci_eval.tasks.model import task_folders
from ci_eval.verdict.baseline import BASELINE_FILE, Baseline, dumps_baseline

@dataclass(frozen=True)
class InitRequest:
    """`ci-eval init`'s options (the names of its argparse destinations)."""

    root: str
    agent: str = "reference"
    model: str | None = None
    default_branch: str | None = None
    action: str = ACTION_REF
    force: bool = False


@dataclass(frozen=True)
class InitOutcome:
    """What init wrote (in order), the tasks tasks/ already held, and the next steps."""

    root: Path
    written: list[Path]
    existing_tasks: int
    example_added: bool
    next_steps: str


def template_text(name: str) -> str:
    return resources.files("ci_eval").joinpath(f"templates/{name}").read_text(encoding="utf-8")


# What an installer leaves among the template files: pip compiles the template .py files into
# __pycache__/ on a normal (non-editable) install. Never part of what init writes.
NOT_TEMPLATES = ("__pycache__",)
NOT_TEMPLATE_SUFFIXES = (".pyc", ".pyo")


def template_tree(name: str) -> dict[str, tuple[str, bool]]:
    """relative path -> (text, executable) for every template file under templates/NAME (the
    bytecode an install compiles beside them left out)."""
    base = resources.files("ci_eval").joinpath(f"templates/{name}")
    found: dict[str, tuple[str, bool]] = {}

    def walk(node, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            rel = f"{prefix}{child.name}"
            if child.name in NOT_TEMPLATES or child.name.endswith(NOT_TEMPLATE_SUFFIXES):
                continue
            if child.is_dir():
                walk(child, rel + "/")
            else:
                found[rel] = (child.read_text(encoding="utf-8"), rel.endswith(".sh"))

    walk(base, "")
    return found


def model_entry(request: InitRequest, install) -> str:
    """The agents: entry that carries --model (appended to ci-eval.yaml), or "". A preset that
    init cannot set up, or one that needs a model and got none, is refused with the reason."""
    if install is not None and install.refused:
        raise UserError(install.refused, field="--agent")
    if request.model is None:
        if install is not None and install.needs_model:
            raise UserError(f"{request.agent} has no default model: pass --model "
                            "(e.g. anthropic/claude-sonnet-4-5); nothing was written",
                            field="--model")
        return ""
    if install is None:
        raise UserError(f"--model is for a preset ({', '.join(sorted(presets.PRESETS))}), "
                        f"not {request.agent!r}", field="--model")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*", request.model):
        raise UserError(f"expected a model name, got {request.model!r}", field="--model")
    return (f"\n# --model of `ci-eval init`\nagents:\n  {request.agent}:\n"
            f"    preset: {request.agent}\n    model: {json.dumps(request.model)}\n")


def config_schema_url(action: str) -> str:
    """ci-eval.schema.json at the action's ref (what the yaml-language-server line points at)."""
    repo, ref = action.split("@", 1)
    owner_repo = "/".join(repo.split("/")[:2])
    return f"https://raw.githubusercontent.com/{owner_repo}/{ref}/ci_eval/tasks/schemas/" \
        "ci-eval.schema.json"


def checked_out_branch(root) -> str:
    done = subprocess.run(["git", "-C", str(root), "symbolic-ref", "--quiet", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "main"


def planned_files(root: Path, request: InitRequest) -> tuple[dict, AgentConfig, list]:
    """({path: (text, executable)} of everything init writes, the agent, the tasks already
    there)."""

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", request.agent):
        raise UserError(f"expected an agent name, got {request.agent!r}", field="--agent")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[A-Za-z0-9_./-]+",
                        request.action):
        raise UserError(f"expected OWNER/REPO@REF, got {request.action!r}", field="--action")
    config_text = template_text("ci-eval.yaml").replace("@@AGENT@@", request.agent).replace(
        "@@SCHEMA_URL@@", config_schema_url(request.action))
    install = presets.install_for(request.agent)
    config_text += model_entry(request, install)
    config = parse_config(yaml.safe_load(config_text), "ci-eval.yaml (to be written)")
    agent = resolve_agent(config, request.agent, None)
    block = harness_block(root, agent)
    if block:
        config_text = config_text.replace(OWN_AGENT_LINE, block + OWN_AGENT_LINE, 1)
        config = parse_config(yaml.safe_load(config_text), "ci-eval.yaml (to be written)")
        agent = resolve_agent(config, request.agent, None)
    branch = request.default_branch or checked_out_branch(root)
    requires = task_requirements(root) if (root / "tasks").is_dir() else []
    env_block = agent_env_block(agent_secrets(agent, install))
    install_block = agent_install_block(install)
    files = {root / "ci-eval.yaml": (config_text, False),
             root / BASELINE_FILE: (dumps_baseline(Baseline()), False)}
    for name in WORKFLOWS:
        text = render_workflow(template_text(f"workflows/{name}"), action=request.action,
                               default_branch=branch, env_block=env_block,
                               install_block=install_block, requires=requires)
        files[root / ".github" / "workflows" / name] = (text, False)
    existing_tasks = task_folders(root) if (root / "tasks").is_dir() else []
    if not existing_tasks or (request.force and (root / "tasks" / EXAMPLE_TASK).is_dir()):
        today = datetime.date.today().isoformat()
        for rel, (text, executable) in template_tree("task").items():
            files[root / "tasks" / EXAMPLE_TASK / rel] = (text.replace("@@TODAY@@", today),
                                                          executable)
    return files, agent, existing_tasks


OWN_AGENT_LINE = "# Your own agent, run in each task's workspace"


def harness_block(root, agent) -> str:
    """ci-eval.yaml's entry for a preset agent whose tool reads files this repo holds
    (CLAUDE.md, .claude/, AGENTS.md ...): they make up the team's agent, named in `harness:`
    ("" when the repo holds none, or the agent is no preset)."""
    if not agent.preset:
        return ""
    harness = agent_harness(agent, root)
    if not harness.entries:
        return ""
    listed = "".join(f"      - {entry.path}\n" for entry in harness.entries)
    return (f"# The agent under test: the {agent.preset} preset with the files of this repo it "
            "reads (found by\n# `ci-eval init`). `harness:` lists them: they are laid into "
            "every run's workspace, and a PR\n# that changes them is judged on them "
            "(docs/harness.md). `harness: []` runs the bare tool.\n"
            f"agents:\n  {agent.name}:\n    preset: {agent.preset}\n    harness:\n{listed}\n")


def agent_secrets(agent, install) -> tuple[str, ...]:
    """The secrets the run step gets: the preset's (its `install`), then the agent's env."""
    return tuple(dict.fromkeys((*(install.secrets if install else ()), *agent.env)))


def task_requirements(root) -> list[str]:
    """What the tasks already in tasks/ list under `requires` (the runner must have them)."""
    try:
        tasks = load_tasks(root, None)
    except UserError:
        return []  # `ci-eval validate` says what is wrong; init's advice does without
    return sorted({name for task in tasks for name in task.requires})


def init_repo(request: InitRequest) -> InitOutcome:
    """Plan every file, refuse any clash (without --force) or folder problem, then write them."""
    root = Path(request.root)
    if not root.is_dir():
        raise UserError("folder does not exist", path=root, field="--root")
    files, agent, existing_tasks = planned_files(root, request)
    check_writable(root, files, force=request.force)
    for path, (text, executable) in files.items():
        ensure_dir(path.parent)
        write_atomic(path, text, field=None)
        if executable:
            os.chmod(path, 0o755)
    install = presets.install_for(agent.preset)
    steps = next_steps(agent, install, agent_secrets(agent, install), request.action,
                       task_requirements(root) if existing_tasks else [],
                       harness=harness_step(root, agent))
    return InitOutcome(root, list(files), len(existing_tasks),
                       any(EXAMPLE_TASK in str(p) for p in files), steps)


def check_writable(root: Path, files: dict, *, force: bool) -> None:
    """Nothing is written when a file exists (without --force) or a path cannot be written."""
    clashes = [p for p in files if p.exists() or p.is_symlink()]
    if clashes and not force:
        shown = ", ".join(str(p.relative_to(root)) for p in clashes[:4])
        more = f" and {len(clashes) - 4} more" if len(clashes) > 4 else ""
        raise UserError(f"would overwrite {shown}{more} (pass --force to replace them; "
                        "nothing was written)", path=root)
    for path in files:  # every folder problem before the first write
        for parent in reversed(path.relative_to(root).parents[:-1]):
            if (root / parent).exists() and not (root / parent).is_dir():
                raise UserError("is a file (expected a folder); nothing was written",
                                path=root / parent)
        if path.is_dir():
            raise UserError("is a folder (expected a file); nothing was written", path=path)
