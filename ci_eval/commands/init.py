"""`ci-eval init`: set a repository up for ci-eval (config, an example task, the workflows)."""

from __future__ import annotations

import argparse

from ci_eval.agents import presets
from ci_eval.cli_options import add_root_argument
from ci_eval.scaffold import ACTION_REF, EXAMPLE_TASK


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
    # The built-in presets only: building the parser never loads a plugin (agents/presets.py).
    builtin = {preset.name: preset.install for preset in presets.builtin_presets()}
    offered = [name for name, i in sorted(builtin.items()) if not i.refused]
    needing = [name for name in offered if builtin[name].needs_model]
    refused = [name for name, i in sorted(builtin.items()) if i.refused]
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


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from ci_eval.scaffold.files import InitRequest, init_repo

    request = InitRequest(**{f.name: getattr(args, f.name) for f in dataclasses.fields(InitRequest)})
    outcome = init_repo(request)
    for path in outcome.written:
        print(f"wrote {path.relative_to(outcome.root)}")
    if outcome.existing_tasks and not outcome.example_added:
        print(f"tasks/ already holds {outcome.existing_tasks} task(s): no example task added")
    print(outcome.next_steps)
    return 0
