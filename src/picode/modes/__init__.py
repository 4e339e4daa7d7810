"""picode.modes."""
