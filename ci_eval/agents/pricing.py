"""Cost where the tool reports none: ci-eval.yaml's `pricing:` table, in USD per million tokens.

    pricing:
      gpt-5-codex:            {input: 1.25, cached_input: 0.125, output: 10}
      claude-sonnet-4-5:      {input: 3, cached_input: 0.30, cache_write: 3.75, output: 15}

`input` and `output` are required; `cached_input` (cache reads) and `cache_write` default to the
`input` price. Keys are model names exactly as the agent's `model:` (or, when the agent has none,
as the tool reports it). Prices may be 0 (a local model).

    report = cost_from_pricing(report, model, pricing)

prices the tokens when the table can price the run (cost_source "pricing"): model by model when
the tool reports usage per model (Claude, Gemini) and every one of them is in the table, else at
the agent's model's price when input and output counts are known. The table wins over a cost
the tool reported itself: a user who wrote prices for a model means them (a gateway model the
tool prices at its defaults, a negotiated rate), and the replaced figure is noted on the run.
When the table cannot price the run, a cost the tool reported is kept (cost_source "agent");
otherwise the cost stays None (cost_source None), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ci_eval.agents.preset import AgentReport
from ci_eval.agents.values import got, non_negative_number
from ci_eval.errors import UserError

PRICE_KEYS = ("input", "cached_input", "cache_write", "output")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None  # default: input
    cache_write: float | None = None  # default: input

    def cost(self, input_tokens: int, output_tokens: int, cached_input_tokens: int | None,
             cache_write_tokens: int | None) -> float:
        cached, written = cached_input_tokens or 0, cache_write_tokens or 0
        fresh = max(0, input_tokens - cached - written)
        dollars = (fresh * self.input
                   + cached * (self.input if self.cached_input is None else self.cached_input)
                   + written * (self.input if self.cache_write is None else self.cache_write)
                   + output_tokens * self.output)
        return dollars / 1_000_000


def cost_from_pricing(report: AgentReport, model: str | None,
                      pricing: dict[str, ModelPrice]) -> AgentReport:
    priced = priced_cost(report, model, pricing)
    if priced is not None:
        notes = report.notes
        if report.cost_usd is not None:
            notes += ((f"the tool's own cost ${report.cost_usd:.6g} replaced by ci-eval.yaml's "
                       "pricing"),)
        return replace(report, cost_usd=priced, cost_source="pricing", notes=notes)
    if report.cost_usd is not None:
        return report if report.cost_source else replace(report, cost_source="agent")
    return replace(report, cost_source=None)


def priced_cost(report: AgentReport, model: str | None,
                pricing: dict[str, ModelPrice]) -> float | None:
    """The run's cost at ci-eval.yaml's prices, or None when the table cannot price all of it:
    model by model when every model the tool reports usage for is in the table, else the
    agent's model (or the one the tool reported) for all tokens, when input and output are
    known."""
    by_model = report.model_usage
    costs = [pricing[m.model].cost(m.input_tokens, m.output_tokens, m.cached_input_tokens,
                                   m.cache_write_tokens)
             for m in by_model if m.model in pricing and m.input_tokens is not None
             and m.output_tokens is not None]
    if by_model and len(costs) == len(by_model):
        return round(sum(costs), 8)
    price = pricing.get(model or report.model or "")
    if price is None or report.input_tokens is None or report.output_tokens is None:
        return None
    return round(price.cost(report.input_tokens, report.output_tokens, report.cached_input_tokens,
                            report.cache_write_tokens), 8)


def parse_pricing(value: Any, path: Path | str) -> dict[str, ModelPrice]:
    """ci-eval.yaml's `pricing:` mapping (its keys and types checked by ci-eval.schema.json
    first; the did-you-mean words people use for a price, cache_read and the like, are its
    x-synonyms) -> ModelPrice by model; a price that is not finite is a UserError."""
    if value is None:
        return {}
    prices: dict[str, ModelPrice] = {}
    for model, spec in value.items():
        where = f"pricing.{model}"
        if not isinstance(model, str):  # a YAML key may be a number: JSON Schema sees strings
            raise UserError(f"expected a model name, got {got(model)}", path=path, field=where)
        numbers = {key: non_negative_number(spec[key], path, f"{where}.{key}")
                   for key in PRICE_KEYS if key in spec}
        prices[model] = ModelPrice(**numbers)
    return prices
