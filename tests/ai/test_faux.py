"""The scripted provider itself: requests recorded, turns in order, scripts and edge cases."""

from __future__ import annotations

import pytest

from picode.ai.models import ModelCost
from picode.ai.options import StreamOptions
from picode.ai.providers.faux import (
    FauxProvider,
    FauxText,
    FauxToolCall,
    FauxTurn,
    text_turn,
    tool_turn,
)
from picode.ai.stream import stream_simple
from picode.ai.types import AssistantMessage, Context, Tool, ToolCall, UserMessage
from tests.ai.stream_helpers import collapsed, collect, run


def _context(text: str = "hi") -> Context:
    return Context(
        system_prompt="sys",
        messages=[UserMessage(text)],
        tools=[Tool("read", "Read", {}), Tool("bash", "Run", {})],
    )


def test_each_provider_gets_its_own_api_and_a_configurable_model() -> None:
    first = FauxProvider(context_window=1000, max_tokens=99, reasoning=False, model_id="tiny")
    second = FauxProvider(cost=ModelCost(input=1, output=2))
    try:
        assert first.api != second.api
        assert first.model.api == first.api
        assert first.model.ref == "faux/tiny"
        assert (first.model.context_window, first.model.max_tokens) == (1000, 99)
        assert first.model.reasoning is False
        assert second.model.cost == ModelCost(input=1, output=2)
    finally:
        first.close()
        second.close()


def test_turns_play_in_order_and_requests_are_recorded() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("one")])
        faux.add(text_turn("two"))
        try:
            options = StreamOptions(max_tokens=123, session_id="s1")
            first = await stream_simple(faux.model, _context("q1"), options).result()
            assert faux.request_seen.is_set()
            second = await stream_simple(faux.model, _context("q2")).result()
            assert (first.text, second.text) == ("one", "two")
            assert len(faux.requests) == 2
            request = faux.requests[0]
            assert request.system_prompt == "sys"
            assert request.tool_names == ["read", "bash"]
            assert [m.text for m in request.messages] == ["q1"]  # type: ignore[union-attr]
            assert request.options is options
            assert faux.last_request is faux.requests[1]
        finally:
            faux.close()

    run(body())


def test_recorded_messages_are_a_copy_of_the_list() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("ok")])
        try:
            context = _context()
            await stream_simple(faux.model, context).result()
            context.messages.append(UserMessage("later"))
            assert len(faux.last_request.messages) == 1
        finally:
            faux.close()

    run(body())


def test_a_scripted_turn_can_depend_on_the_context() -> None:
    def echo(context: Context) -> FauxTurn:
        last = context.messages[-1]
        assert isinstance(last, UserMessage)
        return text_turn(f"you said {last.text}")

    async def body() -> None:
        faux = FauxProvider([echo])
        try:
            final = await stream_simple(faux.model, _context("ping")).result()
            assert final.text == "you said ping"
        finally:
            faux.close()

    run(body())


def test_running_out_of_turns_is_a_clear_error() -> None:
    async def body() -> None:
        faux = FauxProvider()
        try:
            final = await stream_simple(faux.model, _context()).result()
            assert final.stop_reason == "error"
            assert final.error_message == "Faux provider: no scripted turn left"
        finally:
            faux.close()

    run(body())


def test_chunking_and_text_before_tool_calls() -> None:
    async def body() -> None:
        faux = FauxProvider(
            [tool_turn(FauxToolCall("read", {"path": "x"}, id="c1"), text="Reading.")],
            chunk_size=1,
            delay=0.0005,
        )
        try:
            stream = stream_simple(faux.model, _context())
            events = await collect(stream)
            assert collapsed(events) == [
                ("start",),
                ("text_start", 0),
                ("text_delta", 0, "Reading."),
                ("text_end", 0),
                ("toolcall_start", 1),
                ("toolcall_delta", 1, '{"path": "x"}'),
                ("toolcall_end", 1),
                ("done",),
            ]
            deltas = [e for e in events if e.type == "text_delta"]
            assert all(len(e.delta) >= 1 for e in deltas)  # type: ignore[union-attr]
            assert (await stream.result()).tool_calls == [ToolCall("c1", "read", {"path": "x"})]
        finally:
            faux.close()

    run(body())


def test_invalid_scripted_arguments_end_as_an_empty_dict_without_crashing() -> None:
    async def body() -> None:
        faux = FauxProvider([tool_turn(FauxToolCall("write", '{"path": "a.py", "content": '))])
        try:
            final = await stream_simple(faux.model, _context()).result()
            assert final.stop_reason == "toolUse"
            # Truncated: the recoverable part survives, nothing raises.
            assert final.tool_calls[0].arguments in ({}, {"path": "a.py"})
        finally:
            faux.close()

    run(body())


def test_turn_level_chunk_size_and_end_delay_still_finish() -> None:
    async def body() -> None:
        faux = FauxProvider([FauxTurn([FauxText("abcdef")], chunk_size=2, end_delay=0.001)])
        try:
            final = await stream_simple(faux.model, _context()).result()
            assert isinstance(final, AssistantMessage)
            assert final.text == "abcdef"
            assert final.stop_reason == "stop"
        finally:
            faux.close()

    run(body())


def test_close_unregisters_the_api() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("x")])
        faux.close()
        with pytest.raises(ValueError, match=faux.api):
            stream_simple(faux.model, _context())

    run(body())
