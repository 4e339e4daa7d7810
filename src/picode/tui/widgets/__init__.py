"""Widgets of the main screen; each only displays what it is told."""
