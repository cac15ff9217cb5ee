"""Golden-task candidates from a repository: its history, or synthesized bugs (docs/generate.md)."""
