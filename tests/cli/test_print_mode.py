"""``picode -p`` and ``--mode json`` end to end: the real executable, the real SDKs, the
scripted wire server, for every wire API.

Each child process pays for importing an SDK, so one run checks several things: the json
run below is also the tool round trip, and the ``-c`` run also checks the printed answer.
"""

from __future__ import annotations

from typing import Any

from tests.cli.apis import ApiDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer


def test_json_events_of_a_tool_round_trip(
    api: ApiDriver, wire: WireServer, picode: PicodeEnv
) -> None:
    (picode.project / "notes.txt").write_text("alpha-bravo-charlie 42\n", encoding="utf-8")
    wire.enqueue(
        api.tool_call("call_1", "read", {"path": "notes.txt"}),
        api.text("The notes", " say alpha."),
    )

    result = picode.run("--mode", "json", "-p", "what is in notes.txt?", "--model", api.model)

    assert result.returncode == 0, result.stderr
    events = result.json_lines()
    types = [event["type"] for event in events]
    assert types[0] == "session"
    assert events[0]["id"] == picode.session_entries()[0]["id"]
    assert types[1] == "agent_start"
    assert types[-1] == "agent_end"
    assert types.count("turn_start") == types.count("turn_end") == 2
    assert types.index("tool_execution_start") < types.index("tool_execution_end")
    tool_end = events[types.index("tool_execution_end")]
    assert tool_end["tool_name"] == "read" and not tool_end["is_error"]
    assert "alpha-bravo-charlie 42" in tool_end["result"]["content"][0]["text"]
    assert _streamed_text(events) == "The notes say alpha."
    ends = [event["message"]["role"] for event in events if event["type"] == "message_end"]
    assert ends == ["user", "assistant", "toolResult", "assistant"]

    assert len(wire.requests) == 2
    assert "what is in notes.txt?" in wire.requests[0].body.decode()
    follow_up = wire.requests[1].body.decode()
    assert "alpha-bravo-charlie 42" in follow_up  # the tool result went back to the model
    assert "call_1" in follow_up


def test_continue_prints_the_answer_and_sends_the_earlier_history(
    api: ApiDriver, wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(api.text("The colour is ORANGE."), api.text("You asked", " about colours."))

    first = picode.run("-p", "pick a colour", "--model", api.model)
    second = picode.run("-p", "-c", "what did I ask?", "--model", api.model)

    assert first.returncode == 0, first.stderr
    assert first.stdout == "The colour is ORANGE.\n"
    assert second.returncode == 0, second.stderr
    assert second.stdout == "You asked about colours.\n"
    history = wire.requests[1].body.decode()
    for text in ("pick a colour", "The colour is ORANGE.", "what did I ask?"):
        assert text in history
    assert len(picode.session_files()) == 1


def _streamed_text(events: list[dict[str, Any]]) -> str:
    return "".join(
        event["event"]["delta"]
        for event in events
        if event["type"] == "message_update" and event["event"]["type"] == "text_delta"
    )


def test_an_open_silent_stdin_does_not_hold_a_prompt_given_as_words(
    wire: WireServer, picode: PicodeEnv
) -> None:
    from tests.cli.apis import AnthropicDriver, use

    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("Answered."))
    child = picode.start("-p", "hello", "--model", api.model)  # stdin: a pipe left open
    try:
        assert child.wait(timeout=60) == 0
    finally:
        child.stop()
    assert child.lines.get(timeout=5) == "Answered.\n"
    assert "nothing came on stdin" in child.stderr()


def test_piped_stdin_still_joins_the_prompt(wire: WireServer, picode: PicodeEnv) -> None:
    from tests.cli.apis import AnthropicDriver, use

    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("Reviewed."))
    result = picode.run("-p", "review this", "--model", api.model, stdin="diff --git a b\n")
    assert result.returncode == 0, result.stderr
    body = wire.requests[0].body.decode()
    assert "review this" in body and "diff --git a b" in body


def test_max_turns_stops_print_mode_with_a_failing_exit_code(
    wire: WireServer, picode: PicodeEnv
) -> None:
    from tests.cli.apis import ChatDriver

    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(api.tool_call("call_1", "ls", {}), api.text("Never asked for."))
    result = picode.run("-p", "look around", "--max-turns", "1", "--model", api.model)
    assert result.returncode == 1
    assert "Stopped after 1 model request in a row" in result.stderr
    assert "max_turns = 1" in result.stderr
    assert len(wire.requests) == 1  # the second request was never made
    refused = picode.run("-p", "x", "--max-turns", "-2", "--model", api.model)
    assert refused.returncode == 2 and "--max-turns" in refused.stderr
