"""A prompt template in the installed picode, in a pty: completed with its hint, sent filled in,
and /help lists it."""

from __future__ import annotations

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_D, Start
from tests.wire.server import WireServer


def test_a_template_is_completed_sent_filled_in_and_listed_by_help(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    folder = picode.project / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(
        "---\ndescription: Review one file\nargument-hint: <file>\n---\nReview $1 now.\n",
        encoding="utf-8",
    )
    wire.enqueue(AnthropicDriver().text("Reviewed it."))
    terminal = tui()
    terminal.send(b"/rev")
    terminal.wait_for_text("Review one file")
    terminal.wait_for_text("/review <file>")
    terminal.send(b"\t")
    terminal.type("src/a.py")
    terminal.wait_for_text("Reviewed it.")
    assert "Review src/a.py now." in wire.requests[0].body.decode()
    terminal.type("/help")
    terminal.wait_for_text("Where picode keeps its files")
    assert terminal.alive
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0
