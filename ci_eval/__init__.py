"""ci-eval: regression detection for coding agents."""

__version__ = "0.1.0"
