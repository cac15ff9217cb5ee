"""The importers, by format name (what `ci-eval import FORMAT` takes)."""

from __future__ import annotations

from ci_eval.importers import fixture_json, harbor, swe_bench, task_yaml

FORMATS = {module.NAME: module for module in (fixture_json, harbor, swe_bench, task_yaml)}
