"""The workflow files `ci-eval init` writes: its templates (templates/workflows/) filled with
the action's ref, the default branch, the agent's secrets and its CLI's install step."""

from __future__ import annotations

import re

from ci_eval.agents import installs


def agent_env_block(env_names: tuple[str, ...]) -> str:
    """The `env:` lines that hand the agent's secrets to the shard step ("" for none)."""
    if not env_names:
        return ""
    lines = ["        env:"]
    lines += [f"          {name}: ${{{{ secrets.{name} }}}}" for name in env_names]
    return "\n".join(lines) + "\n"


SETUP_NODE = "actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0"
SETUP_PYTHON = "actions/setup-python@e797f83bcb11b83ae66e0230d6156d7c80228e7c # v6.0.0"
# Reused when PREFIX already holds the pinned version (see the preset's `install`).
INSTALLED_VERSION = {
    "npm": 'node -p "require(process.argv[1]).version" '
           '"$prefix/lib/node_modules/$PACKAGE/package.json" 2>/dev/null',
    "pip": '"$prefix/venv/bin/python" -c "import importlib.metadata as m, sys; '
           'print(m.version(sys.argv[1]))" "$PACKAGE" 2>/dev/null',
}
DATASOURCE = {"npm": "npm", "pip": "pypi"}  # Renovate's names of the registries
INSTALL_COMMANDS = {
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
    commands = list(INSTALL_COMMANDS[install.kind])
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
              f"          # renovate: datasource={DATASOURCE[install.kind]} "
              f"depName={install.package}",
              f'          AGENT_VERSION: "{install.version}"',
              f"          PROGRAM: {install.program}", *python_env,
              "        run: |", "          set -euo pipefail",
              "          # CI_EVAL_AGENT_PREFIX: a folder kept between runs (self-hosted runners)",
              '          prefix="${CI_EVAL_AGENT_PREFIX:-$RUNNER_TEMP/ci-eval-agent}"',
              f'          if [ "$({INSTALLED_VERSION[install.kind]})" != "$AGENT_VERSION" ]; then']
    steps += [f"            {line}" for line in commands]
    steps += ["          fi", '          echo "$prefix/bin" >> "$GITHUB_PATH"']
    return "\n".join(steps) + "\n"


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
    pinned = re.fullmatch(r"[0-9a-f]{40}", action.rsplit("@", 1)[1]) is not None
    note = "" if pinned else "  # pin to a commit SHA if you can  # zizmor: ignore[unpinned-uses]"
    text = text.replace("        # @@AGENT_ENV@@\n", env_block).replace("@@PIN_NOTE@@", note)
    text = text.replace("      # @@AGENT_INSTALL@@\n", install_block)
    text = text.replace("${{ vars.CI_EVAL_PIP_PACKAGES }}", pip_packages(requires or []))
    return (text.replace("@@ACTION_REPO@@", action.split("@", 1)[0])
            .replace("@@ACTION@@", action).replace("@@DEFAULT_BRANCH@@", default_branch))
