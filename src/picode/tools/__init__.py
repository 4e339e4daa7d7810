"""picode.tools."""
