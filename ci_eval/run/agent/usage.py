"""What an agent's run reported: its usage file (a command's), a preset tool's output and
output files (usage, the tool's own outcome, an infrastructure error), all read as the agent's
files: capped, never through a link, anything wrong a note."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval import strict_json
from ci_eval.agents.pricing import cost_from_pricing
from ci_eval.output import UntrustedFile, read_capped
from ci_eval.results.records import USAGE_FIELDS, number_problem

USAGE_CAP_BYTES = 64 * 1024
OUTPUT_FILE_CAP_BYTES = 16 * 1024 * 1024  # a preset's output file (a trajectory)


def read_usage(path: Path) -> tuple[dict | None, str]:
    """Usage the agent reported, or None when it reported none (never a made-up 0). The file is
    the agent's: read without following links or blocking, capped, parsed with limits; anything
    wrong with it is a note, never a crash."""
    try:
        data = read_capped(path, USAGE_CAP_BYTES)
    except UntrustedFile as exc:
        return None, f"usage file ignored: {exc}"
    if data is None:
        return None, ""
    try:
        parsed = strict_json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"usage file is not valid JSON (ignored: {' '.join(str(exc).split())[:100]})"
    if not isinstance(parsed, dict):
        return None, "usage file is not a JSON object (ignored)"
    usage, ignored = {}, []
    for name in USAGE_FIELDS:
        value = parsed.get(name)
        if name != "cost_usd" and isinstance(value, float) and value.is_integer():
            value = int(value)  # 1200.0 tokens is 1200
        if number_problem(name, value):  # what results.check_record would refuse to read back
            ignored.append(f"{name} {json.dumps(value)[:40]}")
            value = None
        usage[name] = value
    if usage["tokens"] is None and usage["input_tokens"] is not None and usage["output_tokens"] is not None:
        usage["tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return usage, f"usage file: ignored {', '.join(ignored)}" if ignored else ""


def read_preset(preset, agent, output, result, paths, pricing):
    """(usage, the tool's outcome fields, a note, an infra error) from a preset tool's output
    and the files it was told to write (read capped, never through a link)."""
    files, notes = {}, []
    for key, path in preset.output_files(str(paths.run_dir)).items():
        try:
            data = read_capped(path, OUTPUT_FILE_CAP_BYTES)
        except UntrustedFile as exc:
            notes.append(str(exc))
            continue
        if data is not None:
            files[key] = data.decode("utf-8", errors="replace")
    report = preset.parse(output, None if result.timed_out else result.exit_code, files)
    report = cost_from_pricing(report, agent.model, pricing or {})
    outcome = {k: v for k, v in list(report.outcome.items())[:20]
               if isinstance(v, (str, int, float, bool)) or v is None}
    return report.usage(), outcome, joined(*notes, report.note), report.infra_error


def joined(*parts: str) -> str:
    """The non-empty parts, "; "-separated (a run's reason from its notes)."""
    return "; ".join(p for p in parts if p)
