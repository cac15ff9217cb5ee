"""Judging a workspace: checks.py in its sandbox, the verdict, test reports, requirements."""
