"""The helpers behind /new, /resume and /fork (the switches themselves: test_agent_session)."""

from __future__ import annotations

from picode.ai.types import AssistantMessage, TextContent, Usage, UserMessage
from picode.session.persistence import Restored
from picode.session.switching import saved_thinking, usage_of


def test_a_saved_thinking_level_is_taken_only_when_picode_knows_it() -> None:
    assert saved_thinking(Restored(thinking="high")) == "high"
    assert saved_thinking(Restored(thinking="turbo")) is None  # a damaged or foreign file
    assert saved_thinking(Restored()) is None


def test_usage_is_summed_over_the_assistant_messages_of_the_context() -> None:
    def reply(tokens_in: int, tokens_out: int) -> AssistantMessage:
        return AssistantMessage(
            [TextContent("ok")], "faux", "faux", "m", usage=Usage(tokens_in, tokens_out)
        )

    usage = usage_of([UserMessage("hi"), reply(100, 7), UserMessage("more"), reply(50, 3)])

    assert (usage.input, usage.output) == (150, 10)
    assert usage_of([]).input == 0
