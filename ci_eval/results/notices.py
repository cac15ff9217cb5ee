"""What a run's `isolation` field records and what it means for a reader.

A results line says how its run was fenced as a label: "agent-sandbox", "agent-unisolated" or
"agent-container" (the docker runner's agent in its container), then "checks-sandbox" (mount +
PID + network namespace), "checks-offline" (only a network namespace), "checks-online"
(nothing) or "checks-docker" (a fresh container with no network), comma-separated. Every label
is written from a RecordedIsolation here (run/sandbox/isolation.Isolation.recorded, the docker
runner's run/runners.isolation_label) and `parse_isolation` is the one reader: one source. The notices every report and comment carries come from the parsed values: never silent
about a sandbox that was missing, nor about a label it cannot read.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

AGENT_SANDBOX, AGENT_UNISOLATED = "agent-sandbox", "agent-unisolated"
AGENT_CONTAINER = "agent-container"  # the docker runner's agent: in its own container


class ChecksIsolation(enum.Enum):
    SANDBOX = "checks-sandbox"  # mount + PID + network namespace: the agent's fences and no network
    OFFLINE = "checks-offline"  # only a network namespace
    ONLINE = "checks-online"  # no namespace at all: network access
    DOCKER = "checks-docker"  # the docker runner: a fresh container with no network


@dataclass(frozen=True)
class RecordedIsolation:
    agent_sandboxed: bool  # in the local sandbox, or in a container (agent_in_container)
    checks: ChecksIsolation
    agent_in_container: bool = False

    @property
    def label(self) -> str:
        agent = AGENT_CONTAINER if self.agent_in_container else (
            AGENT_SANDBOX if self.agent_sandboxed else AGENT_UNISOLATED)
        return f"{agent},{self.checks.value}"


def parse_isolation(label: object) -> RecordedIsolation | None:
    """The value a label stands for; None for anything that is not one."""
    if not isinstance(label, str):
        return None
    agent, _, checks = label.partition(",")
    if agent not in (AGENT_SANDBOX, AGENT_UNISOLATED, AGENT_CONTAINER):
        return None
    try:
        return RecordedIsolation(agent != AGENT_UNISOLATED, ChecksIsolation(checks),
                                 agent_in_container=agent == AGENT_CONTAINER)
    except ValueError:
        return None


def label_notices(labels: set) -> tuple[str, ...]:
    """The notices for the distinct `isolation` labels of the runs."""
    parsed = {label: parse_isolation(label) for label in labels}
    known = [value for value in parsed.values() if value is not None]
    notices = []
    if any(not value.agent_sandboxed for value in known):
        notices.append("agents ran without a sandbox: solutions were readable by the agent")
    if any(value.checks in (ChecksIsolation.OFFLINE, ChecksIsolation.ONLINE) for value in known):
        notices.append("checks ran without a sandbox: agent code they ran could read the "
                       "harness's files and environment")
    if any(value.checks is ChecksIsolation.ONLINE for value in known):
        notices.append("checks ran with network access")
    unknown = sorted(label for label, value in parsed.items() if value is None)
    if unknown:
        shown = ", ".join(repr(str(label)[:60]) for label in unknown[:3])
        notices.append(f"runs recorded an isolation this version cannot read ({shown}): they "
                       "may have run without a sandbox")
    return tuple(notices)


def isolation_notices(records: list[dict]) -> tuple[str, ...]:
    """What the runs' recorded isolation means for the reader; never silent."""
    return label_notices({r.get("isolation", "") for r in records if r.get("isolation")})
