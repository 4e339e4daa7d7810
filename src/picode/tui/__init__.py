"""picode.tui."""
