"""Sandboxes and process lifetimes: isolation, the launcher, timeouts, cancellation, HOME."""
