"""The rpc mode: JSON commands on stdin, events on stdout (docs/cli.md)."""
