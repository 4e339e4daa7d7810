"""One transcript: every message joins it before listeners hear it ended, and it is the
same object before, during and after a run, and after a replace."""

from __future__ import annotations

from picode.agent.events import AgentEnd, AgentEvent, MessageEnd
from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import Message, UserMessage
from tests.agent.fakes import FakeEchoTool, faux, make_agent, run


def test_each_message_is_in_the_transcript_when_its_end_is_heard() -> None:
    provider = faux(tool_turn(FauxToolCall("echo", {"text": "hi"})), text_turn("done"))
    agent, _ = make_agent(provider, tools=[FakeEchoTool()])
    transcript = agent.state.messages
    seen: list[tuple[str, bool]] = []
    added: list[Message] = []

    def listener(event: AgentEvent) -> None:
        if isinstance(event, MessageEnd):
            seen.append((event.message.role, transcript[-1] is event.message))
        elif isinstance(event, AgentEnd):
            added.extend(event.messages)

    agent.subscribe(listener)
    run(lambda: agent.prompt("go"))

    assert seen == [
        ("user", True),
        ("assistant", True),
        ("toolResult", True),
        ("assistant", True),
    ]
    assert agent.state.messages is transcript
    assert added == list(transcript)


def test_replace_and_truncate_keep_the_one_object() -> None:
    provider = faux(text_turn("a"), text_turn("b"))
    agent, _ = make_agent(provider)
    transcript = agent.state.messages
    run(lambda: agent.prompt("first"))

    agent.replace_messages([UserMessage("kept")])
    assert agent.state.messages is transcript
    assert [m.text for m in transcript] == ["kept"]

    run(lambda: agent.prompt("second"))
    assert [m.text for m in transcript] == ["kept", "second", "b"]
    transcript.truncate(1)
    assert [m.text for m in agent.state.messages] == ["kept"]
