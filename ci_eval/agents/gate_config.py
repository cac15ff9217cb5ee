"""ci-eval.yaml's `gate:` section -> verdict.rules.GateRules (the format is documented there).
Every problem is one UserError naming the file and the field path."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from ci_eval.agents.values import check_keys, got, is_number
from ci_eval.errors import UserError
from ci_eval.verdict.rules import (
    AXES,
    DEFAULT_RULES,
    DRIFT_POLICIES,
    MAX_DRIFT_REFRESH_AFTER,
    AxisRule,
    GateRules,
)

GATE_KEYS = ("regression_threshold", "min_baseline_rate", *AXES, "drift",
             "drift_refresh_after")
AXIS_KEYS = ("max_increase", "fail")


def exact(value: float | int) -> Fraction:
    """A YAML number as the decimal it was written as: 0.1 -> 1/10, not the float's binary."""
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)


def _rate(value: Any, path: Path | str, where: str, *, below_one: bool) -> Fraction:
    top = "< 1" if below_one else "<= 1"
    if not is_number(value) or value < 0 or value > 1 or (below_one and value == 1):
        raise UserError(f"expected a number >= 0 and {top}, got {got(value)}", path=path,
                        field=where)
    return exact(value)


def _axis(value: Any, path: Path | str, where: str) -> AxisRule:
    if not isinstance(value, dict):
        raise UserError(f"expected a mapping ({', '.join(AXIS_KEYS)}), got {got(value)}",
                        path=path, field=where)
    check_keys(value, AXIS_KEYS, path, prefix=f"{where}.")
    rule = AxisRule()
    if "max_increase" in value:
        increase = value["max_increase"]
        if not is_number(increase) or increase <= 0:
            raise UserError(f"expected a number > 0 (0.5: flag a rise of more than 50%), got "
                            f"{got(increase)}", path=path, field=f"{where}.max_increase")
        rule = replace(rule, max_increase=exact(increase))
    if "fail" in value:
        if not isinstance(value["fail"], bool):
            raise UserError(f"expected true or false, got {got(value['fail'])}", path=path,
                            field=f"{where}.fail")
        rule = replace(rule, fail=value["fail"])
    return rule


def parse_gate(value: Any, path: Path | str) -> GateRules:
    if value is None:
        return DEFAULT_RULES
    if not isinstance(value, dict):
        raise UserError(f"expected a mapping ({', '.join(GATE_KEYS)}), got {got(value)}",
                        path=path, field="gate")
    check_keys(value, GATE_KEYS, path, prefix="gate.")
    rules = DEFAULT_RULES
    if "regression_threshold" in value:
        rules = replace(rules, regression_threshold=_rate(
            value["regression_threshold"], path, "gate.regression_threshold", below_one=True))
    if "min_baseline_rate" in value:
        rules = replace(rules, min_baseline_rate=_rate(
            value["min_baseline_rate"], path, "gate.min_baseline_rate", below_one=False))
    if "drift" in value:
        if value["drift"] not in DRIFT_POLICIES:
            raise UserError(f"expected {' or '.join(DRIFT_POLICIES)}, got {got(value['drift'])}",
                            path=path, field="gate.drift")
        rules = replace(rules, drift=value["drift"])
    if "drift_refresh_after" in value:
        after = value["drift_refresh_after"]
        if (not isinstance(after, int) or isinstance(after, bool)
                or not 1 <= after <= MAX_DRIFT_REFRESH_AFTER):
            raise UserError(f"expected a whole number of runs from 1 to "
                            f"{MAX_DRIFT_REFRESH_AFTER}, got {got(after)}", path=path,
                            field="gate.drift_refresh_after")
        rules = replace(rules, drift_refresh_after=after)
    axes = dict(rules.axes)
    for axis in AXES:
        if axis in value:
            axes[axis] = _axis(value[axis], path, f"gate.{axis}")
    return replace(rules, axes=axes)
