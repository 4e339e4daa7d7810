"""``picode -p --approve`` asks on the terminal (it used to deny every call unasked: the
terminal was opened in a mode a terminal does not support)."""

from __future__ import annotations

import os

import pytest

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import Terminal
from tests.wire.server import WireServer

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals")


@pytest.mark.parametrize(
    ("answer", "made"), [(b"y\r", True), (b"n not now\r", False), (b"p\r", True)]
)
def test_print_mode_asks_on_the_terminal(
    wire: WireServer, picode: PicodeEnv, answer: bytes, made: bool
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    command = "touch made-by-bash # \x1b[2K\rls"
    wire.enqueue(
        api.tool_call("call_sh", "bash", {"command": command}),
        api.text("Finished."),
    )
    terminal = Terminal(
        ["-p", "--approve", "make a file", "--model", api.model],
        cwd=picode.project,
        env=picode.env,
    )
    try:
        screen = terminal.wait_for_text("Allow? [y]es / [a]lways / [p]roject")
        assert "picode wants to run bash:" in screen
        assert "touch made-by-bash # ␛[2K\\rls" in screen  # the command as it will run
        terminal.send(answer)
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    assert (picode.project / "made-by-bash").exists() == made
    assert "Finished." in terminal.output.decode("utf-8", errors="replace")
    if not made:
        assert "not now" in wire.requests[1].body.decode()
    # "p": approved for good in this folder, saved where picode keeps its trust decisions.
    saved = picode.home / "data" / "approved-commands.json"
    assert saved.exists() == (answer == b"p\r")
