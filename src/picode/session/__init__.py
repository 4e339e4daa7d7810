"""picode.session."""
