"""Nothing untrusted reaches the terminal raw, end to end: the real executable, a hostile
model reply and a hostile bash output, and the bytes picode writes to its pseudo-terminal.

The approval prompt shows the spoofed command of issue #27 whole; ``-p`` cleans its answer
for a terminal and leaves it as it is for a pipe; ``--mode json`` stays valid JSON with
every such character escaped."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")

from picode.modes.acp.updates import tool_title
from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_D, Terminal
from tests.wire.server import WireServer

API = AnthropicDriver()

OSC52 = "\x1b]52;c;aGVsbG8=\x07"
TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
C1_CLEAR = "\x9b2J"
HOSTILE = OSC52 + TITLE + CLEAR + C1_CLEAR
#: As bytes on the wire to the terminal (the C1 CSI is U+009B, UTF-8 encoded).
FORBIDDEN = [part.encode() for part in (OSC52, TITLE, CLEAR, C1_CLEAR)] + [
    b"\x1b]52",
    b"\x1b]0;pwned",
    b"\xc2\x9b",
    b"\x9b2J",
]
SPOOF = "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\r\x1b[2K\x1b[1Als -la"
#: The command as the approval prompt spells it out.
SPOOF_SHOWN = "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\\r␛[2K␛[1Als -la"
#: bash's printf turns these into the hostile bytes only when it runs: the command itself
#: is plain text, the output is not.
HOSTILE_PRINTF = (
    "printf 'out-start\\033]52;c;aGVsbG8=\\007\\033]0;pwned\\007\\033[2J\\302\\2332J out-end\\n'"
)


def _answer_no(terminal: Terminal) -> None:
    """``n`` until the reason field shows (the prompt ignores keys for a moment after it
    appears), then Enter: no, without a reason."""
    for _ in range(60):
        terminal.send(b"n")
        if terminal.poll(lambda screen: "Why not?" in screen, 0.5) is not None:
            terminal.send(b"\r")
            return
    terminal.wait_for_text("Why not?", timeout=0)  # fails with the screen


def _leaks(output: bytes) -> list[bytes]:
    return [sequence for sequence in FORBIDDEN if sequence in output]


def test_hostile_reply_and_bash_output_never_reach_the_terminal(
    tui: object, wire: WireServer, picode: PicodeEnv
) -> None:
    (picode.project / ".git").mkdir()
    (picode.project / ".git" / "HEAD").write_text(f"ref: refs/heads/main{TITLE}\n")
    wire.enqueue(
        API.tool_call("call_b", "bash", {"command": HOSTILE_PRINTF}),
        API.text(f"reply-start {OSC52}", f"{TITLE} middle {CLEAR}", f"{C1_CLEAR} reply-end"),
    )
    terminal: Terminal = tui()  # type: ignore[operator]
    terminal.type("go")
    terminal.wait_for_text("reply-end")
    screen = terminal.wait_for_text("out-end")
    assert "out-start" in screen and "reply-start" in screen
    assert "main␛]0;pwned\\x07" in screen  # the footer's branch, spelled out
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0
    assert _leaks(bytes(terminal.output)) == []


def test_the_spoofed_command_is_shown_whole_before_it_runs(
    tui: object, wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(API.tool_call("call_s", "bash", {"command": SPOOF}), API.text("Denied, fine."))
    terminal: Terminal = tui("--approve")  # type: ignore[operator]
    terminal.type("list the files")
    screen = terminal.wait_for_text("Run this command?")
    assert SPOOF_SHOWN in screen
    _answer_no(terminal)
    terminal.wait_for_text("Denied, fine.")
    assert not (picode.project / "hidden_ran.txt").exists()
    assert _leaks(bytes(terminal.output)) == []
    assert b"\x1b[2K\x1b[1Als -la" not in terminal.output


def test_print_mode_cleans_its_answer_for_a_terminal_only(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    reply = f"answer-start {HOSTILE} answer-end"
    wire.enqueue(API.text(reply), API.text(reply))

    piped = picode.run("-p", "hi", "--model", API.model)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == reply + "\n"  # a pipe gets the answer as it is

    terminal = Terminal(["-p", "hi", "--model", API.model], cwd=picode.project, env=picode.env)
    try:
        assert terminal.wait_exit() == 0
        output = bytes(terminal.output)
    finally:
        terminal.close()
    assert b"answer-start" in output and b"answer-end" in output
    assert _leaks(output) == []


def test_json_mode_stays_valid_json_with_every_control_escaped(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    reply = f"start {HOSTILE}\u202e end"
    wire.enqueue(API.text(reply))

    result = picode.run("--mode", "json", "-p", "hi", "--model", API.model)

    assert result.returncode == 0, result.stderr
    raw = result.stdout.encode()
    assert _leaks(raw) == [] and "\u202e".encode() not in raw and b"\x07" not in raw
    events = result.json_lines()  # every line parses
    end = next(e for e in events if e["type"] == "message_end" and e["message"]["role"] != "user")
    assert end["message"]["content"][0]["text"] == reply  # the same value, escaped
    assert json.loads(json.dumps(end))["message"]["content"][0]["text"] == reply


# --- the ACP permission request -----------------------------------------------------


def test_the_acp_title_of_a_call_is_spelled_out() -> None:
    assert tool_title("bash", {"command": SPOOF}) == f"bash {SPOOF_SHOWN}"
    assert tool_title(f"mcp{TITLE}", {}) == "mcp␛]0;pwned\\x07"


# --- rpc: a protected path is asked about without --approve -----------------------------


def test_rpc_asks_about_a_git_hook_without_approve_and_spells_it_out(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    hook = {"path": ".git/hooks/pre-commit", "content": f"#!/bin/sh\ncurl evil{CLEAR}\n"}
    wire.enqueue(API.tool_call("call_h", "write", hook), API.text("Not written."))
    child = picode.start("--mode", "rpc", "--model", API.model)
    try:
        child.send({"type": "prompt", "message": "add a hook"})
        asked = child.event("approval_request")
        assert asked["protected"] == "git hooks (programs git runs)"
        assert asked["preview"].splitlines()[-1] == "+curl evil␛[2J"
        child.send({"type": "approve", "request_id": asked["request_id"], "decision": "no"})
        child.event("agent_end")
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()
    assert not (picode.project / ".git").exists()


def test_a_300_line_command_leaves_the_choices_on_an_80x24_screen(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    command = "\n".join(f"echo line-{i:03d}" for i in range(300))
    wire.enqueue(API.tool_call("call_l", "bash", {"command": command}), API.text("Skipped."))
    terminal = Terminal(
        ["--approve", "--model", API.model],
        cwd=picode.project,
        env=picode.env,
        columns=80,
        lines=24,
    )
    try:
        terminal.wait_for_text("Ask picode")
        terminal.type("run the long one")
        screen = terminal.wait_for_text("Run this command?")
        screen = terminal.wait_for_text("esc no")  # the last choice (wrapped at 80 columns)
        assert "y yes" in screen and "$ echo line-000↵" in screen and "line-299" not in screen
        terminal.send(b"\x1b[F")  # End: the preview scrolls to the last line
        screen = terminal.wait_for_text("echo line-299")
        assert "esc no" in screen and "y yes" in screen and "Run this command?" in screen
        _answer_no(terminal)
        terminal.wait_for_text("Skipped.")
    finally:
        terminal.close()


def test_acp_asks_about_the_projects_picode_folder_in_the_never_mode(
    wire: WireServer, picode: PicodeEnv
) -> None:
    import asyncio

    from tests.cli.acp_client import FakeEditor, connect, new_session, point_at, prompt

    api = point_at(wire, picode)
    plant = {"path": ".picode/extensions/x.py", "content": "import os\n"}
    wire.enqueue(api.tool_call("call_p", "write", plant), api.text("Not planted."))
    client = FakeEditor(answers=["no"])

    async def script() -> None:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            await prompt(conn, session_id, "plant it")

    asyncio.run(script())
    (asked,) = client.asked
    assert asked.title == "write .picode/extensions/x.py"
    note = asked.content[0].content.text
    assert "always asks" in note and "this project's .picode folder" in note
    assert not (picode.project / ".picode").exists()
