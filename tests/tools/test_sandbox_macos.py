"""The Seatbelt profile for macOS: generated text, checked here (it is not run in CI)."""

from __future__ import annotations

from pathlib import Path

from picode.tools.sandbox.macos import seatbelt_argv, seatbelt_profile
from picode.tools.sandbox.policy import Layout

LAYOUT = Layout(
    writable=(Path("/Users/me/src/app"), Path("/private/tmp")),
    read_only=(Path("/Users/me/src/app/.picode"), Path("/Users/me/src/app/.git/hooks")),
    hidden_folders=(Path("/Users/me/.ssh"),),
    hidden_files=(Path('/Users/me/Library/picode/auth "x".json'),),
    network=False,
)


def test_writes_are_denied_but_for_the_writable_folders_then_the_read_only_ones() -> None:
    lines = seatbelt_profile(LAYOUT).splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    allow = next(line for line in lines if line.startswith("(allow file-write*"))
    assert '(subpath "/Users/me/src/app")' in allow
    assert '(subpath "/private/tmp")' in allow
    assert '(literal "/dev/null")' in allow
    # The last matching rule wins: the read-only exceptions come after the allow.
    deny = next(line for line in lines if line.startswith("(deny file-write* (subpath"))
    assert lines.index(deny) > lines.index(allow)
    assert '(subpath "/Users/me/src/app/.picode")' in deny
    assert '(subpath "/Users/me/src/app/.git/hooks")' in deny


def test_secrets_are_neither_readable_nor_writable_and_quotes_are_escaped() -> None:
    profile = seatbelt_profile(LAYOUT)
    assert '(deny file-read* file-write* (subpath "/Users/me/.ssh")' in profile
    assert '(literal "/Users/me/Library/picode/auth \\"x\\".json")' in profile


def test_the_network_is_denied_unless_allowed() -> None:
    lines = seatbelt_profile(LAYOUT).splitlines()
    # Unix sockets (local daemons) stay usable: their allows come after the deny.
    deny = lines.index("(deny network*)")
    assert lines.index("(allow network-outbound (remote unix-socket))") > deny
    assert lines.index("(allow network-bind (local unix-socket))") > deny
    allowed = Layout(LAYOUT.writable, (), (), (), network=True)
    assert "network" not in seatbelt_profile(allowed)


def test_the_command_line() -> None:
    argv = seatbelt_argv(LAYOUT, ["/bin/zsh", "-c", "ls"], "/usr/bin/sandbox-exec")
    assert argv[0] == "/usr/bin/sandbox-exec"
    assert argv[1] == "-p"
    assert argv[2] == seatbelt_profile(LAYOUT)
    assert argv[3:] == ["/bin/zsh", "-c", "ls"]
