"""``--mode acp``: picode as an Agent Client Protocol agent over stdio (docs/acp.md)."""
