"""Hooks: shell commands run on the session's events (docs/hooks.md).

Only the session uses them; front ends see what hooks do through the session's notices.
"""
