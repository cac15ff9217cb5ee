"""`ci-eval init`: set a repository up for ci-eval (config, an example task, the workflows)."""

from __future__ import annotations

import argparse

from ci_eval.agents import installs
from ci_eval.cli_options import add_root_argument

ACTION_REPO = "ci-eval/ci-eval"
ACTION_REF = f"{ACTION_REPO}@v1"
EXAMPLE_TASK = "task-001-slugify-punctuation"
WORKFLOWS = ("eval.yml", "baseline.yml", "gc.yml")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write ci-eval.yaml, an example task, baseline.json and the workflows",
        description="Set up ROOT for ci-eval: ci-eval.yaml (default_agent from --agent), "
        f"tasks/{EXAMPLE_TASK}/ (a valid example task, unless tasks/ already holds tasks), an "
        "empty baseline.json, .github/workflows/eval.yml (sharded PR eval, sticky comment, "
        "gate, run history on the default branch), baseline.yml (baseline refresh by PR) and "
        "gc.yml (weekly entropy GC by PR). Refuses to overwrite any of them "
        "without --force, checking all before writing any. Prints the next steps: the secrets "
        "to add and the repository setting for workflow PRs. Exit 0, 2 on bad input.",
    )
    add_root_argument(parser)
    offered = [name for name, i in sorted(installs.INSTALLS.items()) if not i.refused]
    needing = [name for name in offered if installs.INSTALLS[name].needs_model]
    refused = [name for name, i in sorted(installs.INSTALLS.items()) if i.refused]
    parser.add_argument("--agent", default="reference", metavar="NAME",
                        help="default_agent of ci-eval.yaml: a built-in (reference, noop) or a "
                        f"preset: {', '.join(offered)} ({', '.join(needing)} with --model). "
                        f"Not offered: {', '.join(refused)} (no package a workflow can install; "
                        "set it up by hand). Default reference")
    parser.add_argument("--model", metavar="MODEL",
                        help="the preset's model, written as an agents: entry of ci-eval.yaml "
                        "(needed by " + ", ".join(needing) + ")")
    parser.add_argument("--default-branch", metavar="BRANCH",
                        help="branch whose pushes run the eval (default: the checked-out "
                        "branch, else main)")
    parser.add_argument("--action", default=ACTION_REF, metavar="OWNER/REPO@REF",
                        help=f"the action the workflows use (default {ACTION_REF})")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.set_defaults(handler=run)


def _template(name: str) -> str:
    from importlib import resources

    return resources.files("ci_eval").joinpath("templates", name).read_text(encoding="utf-8")


# What an installer leaves among the template files: pip compiles the template .py files into
# __pycache__/ on a normal (non-editable) install. Never part of what init writes.
NOT_TEMPLATES = ("__pycache__",)
NOT_TEMPLATE_SUFFIXES = (".pyc", ".pyo")


def _template_tree(name: str) -> dict[str, tuple[str, bool]]:
    """relative path -> (text, executable) for every template file under templates/NAME (the
    bytecode an install compiles beside them left out)."""
    from importlib import resources

    base = resources.files("ci_eval").joinpath("templates", name)
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


def agent_env_block(env_names: tuple[str, ...]) -> str:
    """The `env:` lines that hand the agent's secrets to the shard step ("" for none)."""
    if not env_names:
        return ""
    lines = ["        env:"]
    lines += [f"          {name}: ${{{{ secrets.{name} }}}}" for name in env_names]
    return "\n".join(lines) + "\n"


SETUP_NODE = "actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0"
SETUP_PYTHON = "actions/setup-python@e797f83bcb11b83ae66e0230d6156d7c80228e7c # v6.0.0"
# Reused when PREFIX already holds the pinned version (see agents/installs.py).
_INSTALLED_VERSION = {
    "npm": 'node -p "require(process.argv[1]).version" '
           '"$prefix/lib/node_modules/$PACKAGE/package.json" 2>/dev/null',
    "pip": '"$prefix/venv/bin/python" -c "import importlib.metadata as m, sys; '
           'print(m.version(sys.argv[1]))" "$PACKAGE" 2>/dev/null',
}
_DATASOURCE = {"npm": "npm", "pip": "pypi"}  # Renovate's names of the registries
_INSTALL_COMMANDS = {
    "npm": ['npm install --global --prefix "$prefix" --no-fund --no-audit --loglevel=error \\',
            '  "$PACKAGE@$AGENT_VERSION"'],
    "pip": ['python3 -m venv "$prefix/venv"',
            '"$prefix/venv/bin/python" -m pip install --quiet --disable-pip-version-check \\',
            '  "$PACKAGE==$AGENT_VERSION"',
            'mkdir -p "$prefix/bin"',
            'ln -sf "$prefix/venv/bin/$PROGRAM" "$prefix/bin/$PROGRAM"'],
}


def agent_install_block(install) -> str:
    """The steps before the run step that put the preset's CLI, at its pinned version, on PATH
    ("" for agents that need none; a comment for a tool with no registry package)."""
    if install is None:
        return ""
    if install.kind is None:
        return (f"      # {install.program}: {install.model_note}\n")
    steps = []
    if install.kind == "npm":
        steps += [f"      - uses: {SETUP_NODE}", "        with:",
                  f'          node-version: "{installs.NODE_VERSION}"']
    commands = list(_INSTALL_COMMANDS[install.kind])
    python_env = []
    if install.python:  # its venv's Python, kept off PATH: ci-eval's own steps keep theirs
        steps += [f"      - uses: {SETUP_PYTHON}", "        id: agent-python", "        with:",
                  f'          python-version: "{install.python}"',
                  "          update-environment: false"]
        python_env = ["          AGENT_PYTHON: ${{ steps.agent-python.outputs.python-path }}"]
        commands[0] = '"$AGENT_PYTHON" -m venv "$prefix/venv"'
    # The pin in Renovate's `# renovate:` + `*_VERSION:` convention (its preset
    # customManagers:githubActionsVersions reads it), so a bot's bump PR changes this one line.
    steps += [f"      - name: Install {install.program} ({install.package})",
              "        shell: bash", "        env:",
              f'          PACKAGE: "{install.package}"',
              f"          # renovate: datasource={_DATASOURCE[install.kind]} "
              f"depName={install.package}",
              f'          AGENT_VERSION: "{install.version}"',
              f"          PROGRAM: {install.program}", *python_env,
              "        run: |", "          set -euo pipefail",
              "          # CI_EVAL_AGENT_PREFIX: a folder kept between runs (self-hosted runners)",
              '          prefix="${CI_EVAL_AGENT_PREFIX:-$RUNNER_TEMP/ci-eval-agent}"',
              f'          if [ "$({_INSTALLED_VERSION[install.kind]})" != "$AGENT_VERSION" ]; then']
    steps += [f"            {line}" for line in commands]
    steps += ["          fi", '          echo "$prefix/bin" >> "$GITHUB_PATH"']
    return "\n".join(steps) + "\n"


def model_entry(args, install) -> str:
    """The agents: entry that carries --model (appended to ci-eval.yaml), or "". A preset that
    init cannot set up, or one that needs a model and got none, is refused with the reason."""
    from ci_eval.errors import UserError

    if install is not None and install.refused:
        raise UserError(install.refused, field="--agent")
    if args.model is None:
        if install is not None and install.needs_model:
            raise UserError(f"{install.preset} has no default model: pass --model "
                            "(e.g. anthropic/claude-sonnet-4-5); nothing was written",
                            field="--model")
        return ""
    if install is None:
        raise UserError(f"--model is for a preset ({', '.join(sorted(installs.INSTALLS))}), "
                        f"not {args.agent!r}", field="--model")
    import json
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*", args.model):
        raise UserError(f"expected a model name, got {args.model!r}", field="--model")
    return (f"\n# --model of `ci-eval init`\nagents:\n  {args.agent}:\n"
            f"    preset: {args.agent}\n    model: {json.dumps(args.model)}\n")


def pip_packages(requires: list[str]) -> str:
    """The run step's pip-packages: the repository variable, else what the tasks require."""
    if not requires:
        return "${{ vars.CI_EVAL_PIP_PACKAGES }}"
    return "${{ vars.CI_EVAL_PIP_PACKAGES || '" + " ".join(requires) + "' }}"


def render_workflow(text: str, *, action: str, default_branch: str, env_block: str,
                    install_block: str = "", requires: list[str] | None = None) -> str:
    """Fill a workflow template. An action ref that is not a commit SHA gets a note (and a zizmor
    ignore, since the user chose it): pin it with `--action OWNER/REPO@SHA` where policy asks.
    requires: the tasks' `requires`, installed with pip unless CI_EVAL_PIP_PACKAGES says else."""
    import re

    pinned = re.fullmatch(r"[0-9a-f]{40}", action.rsplit("@", 1)[1]) is not None
    note = "" if pinned else "  # pin to a commit SHA if you can  # zizmor: ignore[unpinned-uses]"
    text = text.replace("        # @@AGENT_ENV@@\n", env_block).replace("@@PIN_NOTE@@", note)
    text = text.replace("      # @@AGENT_INSTALL@@\n", install_block)
    text = text.replace("${{ vars.CI_EVAL_PIP_PACKAGES }}", pip_packages(requires or []))
    return (text.replace("@@ACTION_REPO@@", action.split("@", 1)[0])
            .replace("@@ACTION@@", action).replace("@@DEFAULT_BRANCH@@", default_branch))


def _branch(root) -> str:
    import subprocess

    done = subprocess.run(["git", "-C", str(root), "symbolic-ref", "--quiet", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "main"


def planned_files(root, args) -> dict:
    """({path: (text, executable)} of everything init writes, the agent, the tasks already
    there)."""
    import datetime
    import re

    from ci_eval.agents.config_file import parse_config, resolve_agent
    from ci_eval.errors import UserError
    from ci_eval.tasks.model import task_folders
    from ci_eval.verdict.baseline import BASELINE_FILE, Baseline, dumps_baseline

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", args.agent):
        raise UserError(f"expected an agent name, got {args.agent!r}", field="--agent")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[A-Za-z0-9_./-]+",
                        args.action):
        raise UserError(f"expected OWNER/REPO@REF, got {args.action!r}", field="--action")
    config_text = _template("ci-eval.yaml").replace("@@AGENT@@", args.agent)
    install = installs.install_for(args.agent)
    config_text += model_entry(args, install)
    import yaml

    config = parse_config(yaml.safe_load(config_text), "ci-eval.yaml (to be written)")
    agent = resolve_agent(config, args.agent, None)
    block = harness_block(root, agent)
    if block:
        config_text = config_text.replace(OWN_AGENT_LINE, block + OWN_AGENT_LINE, 1)
        config = parse_config(yaml.safe_load(config_text), "ci-eval.yaml (to be written)")
        agent = resolve_agent(config, args.agent, None)
    branch = args.default_branch or _branch(root)
    requires = task_requirements(root) if (root / "tasks").is_dir() else []
    env_block = agent_env_block(agent_secrets(agent, install))
    install_block = agent_install_block(install)
    files = {root / "ci-eval.yaml": (config_text, False),
             root / BASELINE_FILE: (dumps_baseline(Baseline()), False)}
    for name in WORKFLOWS:
        text = render_workflow(_template(f"workflows/{name}"), action=args.action,
                               default_branch=branch, env_block=env_block,
                               install_block=install_block, requires=requires)
        files[root / ".github" / "workflows" / name] = (text, False)
    existing_tasks = task_folders(root) if (root / "tasks").is_dir() else []
    if not existing_tasks or (args.force and (root / "tasks" / EXAMPLE_TASK).is_dir()):
        today = datetime.date.today().isoformat()
        for rel, (text, executable) in _template_tree("task").items():
            files[root / "tasks" / EXAMPLE_TASK / rel] = (text.replace("@@TODAY@@", today),
                                                          executable)
    return files, agent, existing_tasks


OWN_AGENT_LINE = "# Your own agent, run in each task's workspace"


def harness_block(root, agent) -> str:
    """ci-eval.yaml's entry for a preset agent whose tool reads files this repo holds
    (CLAUDE.md, .claude/, AGENTS.md ...): they make up the team's agent, named in `harness:`
    ("" when the repo holds none, or the agent is no preset)."""
    from ci_eval.agents.harness import agent_harness

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


def harness_step(root, agent) -> str:
    """The next step naming the files that make up the agent ("" for a built-in)."""
    from ci_eval.agents.harness import agent_harness
    from ci_eval.agents.presets import PRESETS

    if agent.builtin:
        return ""
    harness = agent_harness(agent, root)
    if harness.files:
        names = ", ".join(str(e) for e in harness.entries)
        return _para(f"Your agent is the {agent.preset or agent.name} tool plus its harness: "
                     f"{names} ({len(harness.files)} file(s), listed under `harness:` in "
                     "ci-eval.yaml). Every run gets them; a PR that changes them is compared "
                     "on them, and the report names the changed files (docs/harness.md).")
    preset = PRESETS.get(agent.preset) if agent.preset else None
    looked = f" (looked for {', '.join(preset.harness_files)})" if preset else ""
    return _para(f"No harness files found{looked}: runs measure the bare tool. List the repo "
                 "files that make up your agent (instructions, hooks, skills, its own code) "
                 "under `harness:` of its entry in ci-eval.yaml (docs/harness.md).")


def agent_secrets(agent, install) -> tuple[str, ...]:
    """The secrets the run step gets: the preset's (agents/installs.py), then the agent's env."""
    return tuple(dict.fromkeys((*(install.secrets if install else ()), *agent.env)))


def task_requirements(root) -> list[str]:
    """What the tasks already in tasks/ list under `requires` (the runner must have them)."""
    from ci_eval.errors import UserError
    from ci_eval.tasks.load import load_tasks

    try:
        tasks = load_tasks(root, None)
    except UserError:
        return []  # `ci-eval validate` says what is wrong; init's advice does without
    return sorted({name for task in tasks for name in task.requires})


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.output import ensure_dir, write_atomic

    root = Path(args.root)
    if not root.is_dir():
        raise UserError("folder does not exist", path=root, field="--root")
    files, agent, existing_tasks = planned_files(root, args)
    clashes = [p for p in files if p.exists() or p.is_symlink()]
    if clashes and not args.force:
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
    for path, (text, executable) in files.items():
        ensure_dir(path.parent)
        write_atomic(path, text, field=None)
        if executable:
            os.chmod(path, 0o755)
        print(f"wrote {path.relative_to(root)}")
    if existing_tasks and not any(EXAMPLE_TASK in str(p) for p in files):
        print(f"tasks/ already holds {len(existing_tasks)} task(s): no example task added")
    install = installs.install_for(agent.preset)
    print(next_steps(agent, install, agent_secrets(agent, install), args.action,
                     task_requirements(root) if existing_tasks else [],
                     harness=harness_step(root, agent)))
    return 0


def _para(text: str) -> str:
    """A next step's text, wrapped under its number."""
    import textwrap

    return textwrap.fill(text, width=92, subsequent_indent="     ", break_on_hyphens=False)


def agent_step(agent, install, secrets) -> str:
    """What the agent needs on the runner: secrets, its CLI, a login, a model."""
    if agent.builtin:
        return _para(f"The {agent.name} agent needs no secrets (a self-test). For a real one: "
                     "`ci-eval init --force --agent claude-code` (or codex, gemini, aider, "
                     "mini-swe-agent), or your own under `agents:` in ci-eval.yaml with its keys "
                     "under `env:`, added as secrets and to the run step's `env:` in eval.yml.")
    text = ("Add the agent's secret (Settings → Secrets and variables → Actions): "
            f"`gh secret set {secrets[0]}`." if secrets else
            "List the agent's keys under `env:` in ci-eval.yaml and add them as secrets and to "
            "the run step's `env:` in eval.yml.")
    if len(secrets) > 1:
        text += (f" eval.yml's run step also passes {', '.join(secrets[1:])}: set the one of "
                 "your provider.")
    if install and install.kind:
        text += (f" The shard job installs {install.program} ({install.spec}) before the run; "
                 "bump the version there.")
    if install and install.login:
        text += f" Login: {install.login}."
    if install and install.model_note:
        text += f" Model: {install.model_note}."
    text += (" Without the secret the PR gets one comment saying so (\"agent setup broken: ... "
             "is not set\").")
    return _para(text)


def requires_step(requires: list[str]) -> str:
    if requires:
        return _para(f"Your tasks require {', '.join(requires)}: eval.yml and baseline.yml "
                     "install them with pip (pip-packages). Set the repository variable "
                     "CI_EVAL_PIP_PACKAGES to replace that list (a tool that is no PyPI "
                     "package goes in a step before the run step), and rerun `ci-eval init "
                     "--force` when tasks add one. A missing one stops the run before any "
                     "agent run.")
    return _para("Tasks that list tools under `requires` (metadata.json) need them on the "
                 "runner: rerun `ci-eval init --force` to write them into the workflows, or "
                 "put the Python packages in the repository variable CI_EVAL_PIP_PACKAGES "
                 "(e.g. \"pytest ruff\"). A missing one stops the run before any agent run.")


def next_steps(agent, install, secrets, action: str, requires: list[str],
               harness: str = "") -> str:
    repo = action.split("@", 1)[0]
    steps = [
        *([harness] if harness else []),
        agent_step(agent, install, secrets),
        requires_step(requires),
        _para("Let workflows open pull requests (baseline.yml, gc.yml): Settings → Actions → "
              "General → Workflow permissions → \"Allow GitHub Actions to create and approve "
              "pull requests\". PRs opened with GITHUB_TOKEN start no workflows; add a personal "
              "access token or GitHub App token as the secret CI_EVAL_PR_TOKEN to get "
              "ci-eval's checks on them."),
        "Check the tasks locally: ci-eval validate && ci-eval verify",
        _para("Commit and push; then run the \"ci-eval baseline\" workflow from the Actions tab "
              "(or locally: ci-eval run -k 40 && ci-eval baseline update --all) and merge its "
              "PR."),
        _para("Require one check, the report job's (\"report\"; the PR shows it as \"ci-eval / "
              "report (pull_request)\"): Settings → Branches → branch protection → Require "
              "status checks. It runs unless the workflow was cancelled and fails when the plan "
              "or a shard failed; the shard checks need not be required."),
        _para("gc.yml runs weekly: once eval.yml has recorded 10 runs on the default branch, "
              "tasks that passed every run and are more than 6 months old are proposed for the "
              "archive by PR."),
    ]
    body = "\n".join(f"  {n}. {text}" for n, text in enumerate(steps, 1))
    return f"\nNext steps:\n{body}\n  Docs: https://github.com/{repo}/blob/main/docs/github.md"
