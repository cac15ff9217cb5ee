"""What the fake model says next, decided from the request alone (stateless, so a tool's retry of
the same request gets the same answer): the API's request is first reduced to a Turn (the
shell tool it offers, how many tool results and assistant turns the conversation holds), then
plan() picks a Step.

    turn = Turn(shell=ShellTool("Bash", "command", "string"), tool_results=0, assistant_turns=0)
    plan(turn, edit)  ->  Step("tool", command="printf '42\\n' > answer.txt")   # edit first
                      ->  Step("text", text="Done.")                            # then the final

A tool that offers no shell tool (aider) gets the edit as text in aider's SEARCH/REPLACE format
(its one answer: aider sends no further request after applying it).
mini-swe-agent ends a run only on its submit command, so its "final message" is that command.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

# Shell tools by name, as each CLI declares them: Claude Code's Bash, codex's exec_command
# (or the older shell), gemini-cli's and qwen's run_shell_command, mini-swe-agent's and
# opencode's bash, Cline's run_commands (an array of command strings), OpenHands' terminal.
SHELL_TOOL_NAMES = ("Bash", "exec_command", "shell", "run_shell_command", "bash", "run_commands",
                    "terminal")
COMMAND_PROPERTIES = ("command", "cmd", "commands")
MINI_SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
FINAL_TEXT = "Done: the answer is written."


@dataclass(frozen=True)
class Edit:
    """The workspace edit the scripted tool call makes: `path` gets `content`."""

    path: str = "answer.txt"
    content: str = "42\n"

    def command(self) -> str:
        return f"printf %s {shlex.quote(self.content)} > {shlex.quote(self.path)}"

    def search_replace(self) -> str:
        """The edit in aider's SEARCH/REPLACE format (an empty SEARCH creates the file)."""
        body = self.content if self.content.endswith("\n") else self.content + "\n"
        return (f"I will write the answer.\n\n{self.path}\n```\n<<<<<<< SEARCH\n=======\n"
                f"{body}>>>>>>> REPLACE\n```\n")


@dataclass(frozen=True)
class ShellTool:
    name: str
    argument: str  # the property holding the command
    kind: str  # "string", "array" (["bash", "-lc", CMD]) or "commands" ([CMD])
    # mini-swe-agent's run ends on its submit command: its `bash` is the only tool it offers and
    # takes only a command (opencode's `bash` comes among many; Copilot CLI's bash (command,
    # description, shellId, ...) takes a final message)
    submits: bool = False
    # other required properties that take one of a list of values, with the first of them
    # (OpenHands' security_risk: "LOW"): a call without them is refused by the tool
    required: tuple[tuple[str, object], ...] = ()

    def arguments(self, command: str) -> dict:
        value = {"array": ["bash", "-lc", command], "commands": [command]}.get(self.kind, command)
        return {self.argument: value, **dict(self.required)}


@dataclass(frozen=True)
class Turn:
    shell: ShellTool | None
    tool_results: int
    assistant_turns: int


@dataclass(frozen=True)
class Step:
    kind: str  # "tool" | "text"
    command: str = ""
    text: str = ""


def plan(turn: Turn, edit: Edit) -> Step:
    if turn.shell is None:  # aider: its example turns are in every request; it asks once
        return Step("text", text=edit.search_replace())
    if turn.tool_results == 0:
        return Step("tool", command=edit.command())
    if turn.shell.submits:  # mini-swe-agent: a run ends on its submit command
        return Step("tool", command=MINI_SUBMIT)
    return Step("text", text=FINAL_TEXT)


def shell_tool(declarations: list[tuple[str, dict]]) -> ShellTool | None:
    """The shell tool among (name, JSON schema of its parameters), or None."""
    by_name = {name: schema for name, schema in declarations}
    for name in SHELL_TOOL_NAMES:
        if name in by_name:
            properties = (by_name[name] or {}).get("properties") or {}
            argument = next((p for p in COMMAND_PROPERTIES if p in properties), "command")
            declared = str((properties.get(argument) or {}).get("type", "")).lower()
            kind = "string" if declared != "array" else \
                "commands" if argument == "commands" else "array"
            required = (by_name[name] or {}).get("required") or []
            chosen = tuple((p, properties[p]["enum"][0]) for p in required
                           if p != argument and isinstance(properties.get(p), dict)
                           and properties[p].get("enum"))
            return ShellTool(name, argument, kind,
                             submits=name == "bash" and len(by_name) == 1
                             and set(properties) <= {"command"}, required=chosen)
    return None
