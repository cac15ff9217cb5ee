"""A run's workspace: the fresh copy with its .git, outputs applied, the agent's diff."""
