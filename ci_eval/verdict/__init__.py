"""Summaries + baseline.json -> Verdict: baseline, gate, confirmation, calibration, gc (pure decisions; assembled from files by assemble and update)."""
