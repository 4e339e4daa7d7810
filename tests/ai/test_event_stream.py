"""AssistantMessageEventStream (SPEC §3.3): ordering, delta throttling, result(), cleanup."""

from __future__ import annotations

import asyncio
import weakref

import pytest

from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from picode.ai.types import TextContent
from tests.ai.stream_helpers import (
    FakeClock,
    collect,
    message,
    next_event,
    run,
    summary,
    yield_to_loop,
)

#: With a clock that never moves, a delta held back by this throttle would wait forever:
#: anything that arrives promptly was not held back.
FOREVER = 10_000.0


def test_iterates_every_event_in_order_and_result_gives_the_final_message() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream(throttle=0)
        partial = message()
        final = message(content=[TextContent("abc")])
        stream.push(StartEvent(partial))
        stream.push(TextStartEvent(0, partial))
        stream.push(TextDeltaEvent(0, "a", partial))
        stream.push(TextEndEvent(0, "a", partial))
        stream.push(DoneEvent("stop", final))
        events = await collect(stream)
        assert [summary(e) for e in events] == [
            ("start",),
            ("text_start", 0),
            ("text_delta", 0, "a"),
            ("text_end", 0),
            ("done",),
        ]
        assert await stream.result() is final
        # Iteration is over for good.
        with pytest.raises(StopAsyncIteration):
            await next_event(stream)

    run(body())


def test_first_delta_is_delivered_at_once_whatever_the_clock_reads() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream(throttle=FOREVER, clock=FakeClock(0.0))
        stream.push(TextDeltaEvent(0, "first", message()))
        event = await next_event(stream, timeout=2)
        assert summary(event) == ("text_delta", 0, "first")

    run(body())


def test_deltas_in_the_window_merge_only_when_consecutive_same_type_and_index() -> None:
    async def body() -> None:
        clock = FakeClock(50.0)
        stream = AssistantMessageEventStream(throttle=FOREVER, clock=clock)
        partials = [message() for _ in range(12)]
        stream.push(TextDeltaEvent(0, "a", partials[0]))
        assert summary(await next_event(stream)) == ("text_delta", 0, "a")

        # Inside the throttle window now: these are buffered.
        stream.push(TextDeltaEvent(0, "b", partials[1]))
        stream.push(TextDeltaEvent(0, "c", partials[2]))
        stream.push(ThinkingDeltaEvent(0, "t", partials[3]))  # same index, other type
        stream.push(TextDeltaEvent(0, "d", partials[4]))  # not consecutive with "bc"
        stream.push(TextDeltaEvent(2, "e", partials[5]))  # other index
        stream.push(TextDeltaEvent(2, "f", partials[6]))
        stream.push(ToolCallDeltaEvent(3, '{"a"', partials[7]))
        stream.push(ToolCallDeltaEvent(3, ": 1}", partials[8]))

        waiting = asyncio.create_task(next_event(stream))
        await yield_to_loop()
        assert not waiting.done(), "a delta inside the window was delivered early"

        stream.push(TextEndEvent(0, "abcd", partials[9]))  # not a delta: flushes first
        events = [await waiting]
        while events[-1].type != "text_end":
            events.append(await next_event(stream))

        assert [summary(e) for e in events] == [
            ("text_delta", 0, "bc"),
            ("thinking_delta", 0, "t"),
            ("text_delta", 0, "d"),
            ("text_delta", 2, "ef"),
            ("toolcall_delta", 3, '{"a": 1}'),
            ("text_end", 0),
        ]
        # A merged delta carries the latest partial of what it merged (the same object).
        delivered = [next(i for i, p in enumerate(partials) if p is e.partial) for e in events]
        assert delivered == [2, 3, 4, 6, 8, 9]

    run(body())


def test_buffered_deltas_go_out_when_the_window_closes() -> None:
    async def body() -> None:
        clock = FakeClock(10.0)
        stream = AssistantMessageEventStream(throttle=0.01, clock=clock)
        stream.push(TextDeltaEvent(0, "a", message()))
        assert summary(await next_event(stream)) == ("text_delta", 0, "a")
        stream.push(TextDeltaEvent(0, "b", message()))
        stream.push(TextDeltaEvent(0, "c", message()))

        waiting = asyncio.create_task(next_event(stream))
        await yield_to_loop()
        assert not waiting.done()
        clock.advance(0.01)
        event = await asyncio.wait_for(waiting, 2)
        assert summary(event) == ("text_delta", 0, "bc")

    run(body())


def test_a_delta_after_the_window_is_delivered_at_once() -> None:
    async def body() -> None:
        clock = FakeClock(10.0)
        stream = AssistantMessageEventStream(throttle=FOREVER, clock=clock)
        stream.push(TextDeltaEvent(0, "a", message()))
        await next_event(stream)
        clock.advance(FOREVER)
        stream.push(TextDeltaEvent(0, "b", message()))
        assert summary(await next_event(stream, timeout=2)) == ("text_delta", 0, "b")

    run(body())


def test_a_waiting_consumer_is_woken_by_the_next_event() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream(throttle=FOREVER, clock=FakeClock())
        waiting = asyncio.create_task(next_event(stream))
        await yield_to_loop()
        assert not waiting.done()
        stream.push(StartEvent(message()))
        assert summary(await asyncio.wait_for(waiting, 2)) == ("start",)

    run(body())


def test_the_terminal_event_flushes_buffered_deltas_first() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream(throttle=FOREVER, clock=FakeClock())
        final = message()
        stream.push(TextDeltaEvent(0, "a", final))
        await next_event(stream)
        stream.push(TextDeltaEvent(0, "b", final))
        stream.push(TextDeltaEvent(0, "c", final))
        stream.push(ErrorEvent("error", final))
        events = await collect(stream, timeout=2)
        assert [summary(e) for e in events] == [("text_delta", 0, "bc"), ("error",)]

    run(body())


def test_end_without_a_terminal_event_flushes_stops_and_result_raises() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream(throttle=FOREVER, clock=FakeClock())
        stream.push(TextDeltaEvent(0, "a", message()))
        await next_event(stream)
        stream.push(TextDeltaEvent(0, "b", message()))
        pending_result = asyncio.create_task(stream.result())
        await yield_to_loop()
        stream.end()
        events = await collect(stream, timeout=2)
        assert [summary(e) for e in events] == [("text_delta", 0, "b")]
        with pytest.raises(RuntimeError, match="without a final message"):
            await asyncio.wait_for(pending_result, 2)
        with pytest.raises(RuntimeError, match="without a final message"):
            await stream.result()

    run(body())


def test_end_with_a_message_resolves_result() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream()
        final = message()
        stream.end(final)
        assert await stream.result() is final
        assert stream.ended

    run(body())


def test_events_pushed_after_the_terminal_one_are_ignored() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream(throttle=0)
        first = message(model="first")
        stream.push(DoneEvent("stop", first))
        stream.push(TextDeltaEvent(0, "late", message()))
        stream.push(StartEvent(message()))
        stream.push(ErrorEvent("error", message(model="second")))
        events = await collect(stream)
        assert [summary(e) for e in events] == [("done",)]
        assert await stream.result() is first

    run(body())


def test_result_without_iterating_resolves_by_the_terminal_event() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream()
        final = message(stop_reason="error", error_message="boom")
        waiter = asyncio.create_task(stream.result())
        await yield_to_loop()
        assert not waiter.done()
        for _ in range(1000):  # nobody iterates: the pushes must not block or fail
            stream.push(TextDeltaEvent(0, "x", final))
        stream.push(ErrorEvent("error", final))
        assert await asyncio.wait_for(waiter, 2) is final
        assert await stream.result() is final  # again, after the fact

    run(body())


def test_cancelling_one_result_waiter_does_not_break_the_others() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream()
        final = message()
        cancelled = asyncio.create_task(stream.result())
        kept = asyncio.create_task(stream.result())
        await yield_to_loop()
        cancelled.cancel()
        await yield_to_loop()
        stream.push(DoneEvent("stop", final))
        assert await asyncio.wait_for(kept, 2) is final

    run(body())


def test_fast_deltas_under_a_throttle_arrive_as_far_fewer_events_with_the_same_text() -> None:
    count = 2000

    async def stream_through(throttle: float) -> list[str]:
        stream = AssistantMessageEventStream(throttle=throttle)
        partial = message()
        pieces = [f"<{i}>" for i in range(count)]

        async def produce() -> None:
            stream.push(StartEvent(partial))
            for piece in pieces:
                stream.push(TextDeltaEvent(0, piece, partial))
                await asyncio.sleep(0)  # give the consumer every chance to run
            stream.push(DoneEvent("stop", partial))

        producer = asyncio.create_task(produce())
        deltas = [e.delta for e in await collect(stream, timeout=15) if e.type == "text_delta"]
        await producer
        assert "".join(deltas) == "".join(pieces)
        return deltas

    async def body() -> None:
        unthrottled = await stream_through(0.0)
        throttled = await stream_through(0.05)
        # The consumer keeps up, so without a throttle every delta is its own event.
        assert len(unthrottled) == count
        assert len(throttled) < count / 10

    run(body())


def test_aclose_cancels_the_attached_producer_and_leaves_no_task() -> None:
    async def body() -> None:
        before = asyncio.all_tasks()
        stream = AssistantMessageEventStream()
        started = asyncio.Event()

        async def produce() -> None:
            stream.push(StartEvent(message()))
            started.set()
            await asyncio.Event().wait()  # a provider stuck waiting on the network

        producer = asyncio.create_task(produce())
        stream.attach_producer(producer)
        await asyncio.wait_for(started.wait(), 2)
        async for event in stream:
            assert event.type == "start"
            break
        await stream.aclose()
        assert producer.cancelled()
        assert asyncio.all_tasks() == before
        with pytest.raises(StopAsyncIteration):
            await next_event(stream)

    run(body())


def test_aclose_does_not_swallow_the_callers_own_cancellation() -> None:
    async def body() -> None:
        stream = AssistantMessageEventStream()

        async def stubborn_producer() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await asyncio.Event().wait()  # slow to clean up

        producer = asyncio.create_task(stubborn_producer())
        stream.attach_producer(producer)
        await yield_to_loop()
        closer = asyncio.create_task(stream.aclose())
        await yield_to_loop()
        closer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(closer, 2)
        producer.cancel()  # now let it go
        await asyncio.wait([producer], timeout=2)
        assert producer.done()

    run(body())


def test_breaking_out_and_dropping_the_stream_cancels_a_weakly_held_producer() -> None:
    async def body() -> None:
        before = asyncio.all_tasks()
        stream = AssistantMessageEventStream()
        # Like MessageBuilder, the producer holds its stream weakly.
        stream_ref = weakref.ref(stream)

        async def produce() -> None:
            target = stream_ref()
            assert target is not None
            target.push(StartEvent(message()))
            del target
            await asyncio.Event().wait()

        producer = asyncio.create_task(produce())
        stream.attach_producer(producer)
        async for _event in stream:
            break
        del stream
        assert stream_ref() is None
        await asyncio.wait([producer], timeout=2)
        assert producer.cancelled()
        assert asyncio.all_tasks() == before

    run(body())


def test_abandoning_iteration_of_a_stream_without_producer_creates_no_task() -> None:
    async def body() -> None:
        before = asyncio.all_tasks()
        stream = AssistantMessageEventStream(throttle=FOREVER, clock=FakeClock())
        stream.push(TextDeltaEvent(0, "a", message()))
        stream.push(TextDeltaEvent(1, "b", message()))
        async for _event in stream:
            break
        waiting = asyncio.create_task(next_event(stream))
        await yield_to_loop()
        waiting.cancel()  # a consumer cancelled while it sits out the throttle window
        await asyncio.wait([waiting], timeout=2)
        del stream
        assert asyncio.all_tasks() == before

    run(body())
