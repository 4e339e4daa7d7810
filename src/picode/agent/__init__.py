"""picode.agent."""
