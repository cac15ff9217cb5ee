"""What the runs' recorded isolation labels mean for a reader: the notices every report and
comment carries (never silent about a sandbox that was missing)."""

from __future__ import annotations


def label_notices(labels: set[str]) -> tuple[str, ...]:
    """The notices for the distinct `isolation` labels of the runs."""
    notices = []
    if any("agent-unisolated" in label for label in labels):
        notices.append("agents ran without a sandbox: solutions were readable by the agent")
    if any("checks-offline" in label or "checks-online" in label for label in labels):
        notices.append("checks ran without a sandbox: agent code they ran could read the "
                       "harness's files and environment")
    if any("checks-online" in label for label in labels):
        notices.append("checks ran with network access")
    return tuple(notices)


def isolation_notices(records: list[dict]) -> tuple[str, ...]:
    """What the runs' recorded isolation means for the reader; never silent."""
    return label_notices({r.get("isolation", "") for r in records if r.get("isolation")})
