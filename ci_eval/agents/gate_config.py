"""ci-eval.yaml's `gate:` section -> verdict.rules.GateRules (the format is documented there).
Its keys, types and ranges are ci-eval.schema.json's (`gate`), checked before parse_gate sees
the section; here the values become exact fractions and the rules (a finite number: no NaN).
A new gate key: add it to the schema's gate.properties (with its description: the reference page
is generated from it) and read it in parse_gate. Every problem is one UserError naming the file
and the field path."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from ci_eval.agents.values import got, is_number
from ci_eval.errors import UserError
from ci_eval.verdict.rules import (
    AXES,
    DEFAULT_RULES,
    AxisRule,
    GateRules,
)


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
    rule = AxisRule()
    if "max_increase" in value:
        increase = value["max_increase"]
        if not is_number(increase) or increase <= 0:
            raise UserError(f"expected a number > 0 (0.5: flag a rise of more than 50%), got "
                            f"{got(increase)}", path=path, field=f"{where}.max_increase")
        rule = replace(rule, max_increase=exact(increase))
    if "fail" in value:
        rule = replace(rule, fail=value["fail"])
    return rule


def parse_gate(value: Any, path: Path | str) -> GateRules:
    if value is None:
        return DEFAULT_RULES
    rules = DEFAULT_RULES
    if "regression_threshold" in value:
        rules = replace(rules, regression_threshold=_rate(
            value["regression_threshold"], path, "gate.regression_threshold", below_one=True))
    if "min_baseline_rate" in value:
        rules = replace(rules, min_baseline_rate=_rate(
            value["min_baseline_rate"], path, "gate.min_baseline_rate", below_one=False))
    if "drift" in value:
        rules = replace(rules, drift=value["drift"])
    if "drift_refresh_after" in value:
        rules = replace(rules, drift_refresh_after=value["drift_refresh_after"])
    axes = dict(rules.axes)
    for axis in AXES:
        if axis in value:
            axes[axis] = _axis(value[axis], path, f"gate.{axis}")
    return replace(rules, axes=axes)
