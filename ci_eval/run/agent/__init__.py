"""Running the agent: command, environment, sandbox, usage, API proxy, retries, budget."""
