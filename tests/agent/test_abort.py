from __future__ import annotations

import asyncio
import logging

import anyio
import pytest

from picode.ai.abort import AbortController, AbortSignal
from tests.agent.fakes import WAIT, run


def test_abort_sets_aborted_and_keeps_the_first_reason() -> None:
    controller = AbortController()
    assert not controller.signal.aborted
    assert controller.signal.reason is None
    controller.abort("user pressed Esc")
    controller.abort("second reason")
    assert controller.aborted
    assert controller.signal.aborted
    assert controller.signal.reason == "user pressed Esc"


def test_wait_returns_the_reason_once_aborted() -> None:
    async def body() -> None:
        controller = AbortController()
        waiter = asyncio.ensure_future(controller.signal.wait())
        await asyncio.sleep(0)
        assert not waiter.done()
        controller.abort("because")
        assert await asyncio.wait_for(waiter, WAIT) == "because"
        # Already aborted: returns at once.
        assert await controller.signal.wait() == "because"

    run(body)


def test_cancelled_wait_leaves_no_waiter_behind() -> None:
    async def body() -> None:
        controller = AbortController()
        waiter = asyncio.ensure_future(controller.signal.wait())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert controller.signal._waiters == []
        controller.abort()

    run(body)


def test_callbacks_run_once_with_the_reason_and_can_unsubscribe() -> None:
    controller = AbortController()
    seen: list[object] = []
    removed: list[object] = []
    controller.signal.add_callback(seen.append)
    unsubscribe = controller.signal.add_callback(removed.append)
    unsubscribe()
    unsubscribe()  # idempotent
    controller.abort("r1")
    controller.abort("r2")
    assert seen == ["r1"]
    assert removed == []
    late: list[object] = []
    controller.signal.add_callback(late.append)
    assert late == ["r1"]


def test_a_failing_callback_is_logged_and_never_raises_into_abort(
    caplog: pytest.LogCaptureFixture,
) -> None:
    controller = AbortController()
    after: list[object] = []

    def broken(_reason: object) -> None:
        raise RuntimeError("callback bug")

    controller.signal.add_callback(broken)
    controller.signal.add_callback(after.append)
    with caplog.at_level(logging.ERROR):
        controller.abort("x")
    assert after == ["x"]
    assert "abort callback failed" in caplog.text


def test_abort_does_not_raise_when_a_waiter_loop_is_closed() -> None:
    controller = AbortController()
    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(controller.signal.wait())
        loop.run_until_complete(asyncio.sleep(0))
        assert not task.done()
    finally:
        loop.close()
    controller.abort("late")
    assert controller.signal.reason == "late"
    del task


def test_any_aborts_with_the_first_source_and_unhooks_from_all() -> None:
    first, second, third = AbortController(), AbortController(), AbortController()
    combined = AbortSignal.any([first.signal, second.signal, third.signal])
    for source in (first, second, third):
        assert len(source.signal._callbacks) == 1
    seen: list[object] = []
    combined.add_callback(seen.append)
    second.abort("steering")
    assert combined.aborted
    assert combined.reason == "steering"
    assert seen == ["steering"]
    # No source keeps a reference to the combined signal any more.
    assert first.signal._callbacks == []
    assert third.signal._callbacks == []
    first.abort("later")
    assert combined.reason == "steering"


def test_any_with_an_aborted_source_is_aborted_at_once() -> None:
    live = AbortController()
    combined = AbortSignal.any([live.signal, AbortSignal.aborted_with("already")])
    assert combined.aborted
    assert combined.reason == "already"
    assert live.signal._callbacks == []


def test_dispose_detaches_without_aborting() -> None:
    source = AbortController()
    combined = AbortSignal.any([source.signal])
    combined.dispose()
    assert source.signal._callbacks == []
    source.abort()
    assert not combined.aborted


def test_any_wakes_its_waiters() -> None:
    async def body() -> None:
        run_controller, steering = AbortController(), AbortController()
        combined = AbortSignal.any([run_controller.signal, steering.signal])
        waiter = asyncio.ensure_future(combined.wait())
        await asyncio.sleep(0)
        run_controller.abort("stop")
        assert await asyncio.wait_for(waiter, WAIT) == "stop"

    run(body)


@pytest.mark.anyio
async def test_wait_works_inside_an_anyio_task_group() -> None:
    controller = AbortController()
    reasons: list[object] = []

    async def waiter() -> None:
        reasons.append(await controller.signal.wait())

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            controller.abort("anyio")
    assert reasons == ["anyio"]


@pytest.mark.anyio
async def test_a_callback_can_cancel_an_anyio_scope() -> None:
    controller = AbortController()
    with anyio.fail_after(WAIT):
        with anyio.CancelScope() as scope:
            controller.signal.add_callback(lambda _reason: scope.cancel())
            async with anyio.create_task_group() as group:
                group.start_soon(_abort_when_blocked, controller)
                await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert controller.signal.aborted


@pytest.mark.anyio
async def test_an_anyio_cancelled_wait_is_cleaned_up() -> None:
    controller = AbortController()
    with anyio.move_on_after(WAIT) as outer:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_when_blocked, scope)
                await controller.signal.wait()
    assert not outer.cancelled_caught
    assert scope.cancelled_caught
    assert controller.signal._waiters == []
    controller.abort()
    assert controller.signal.aborted


async def _abort_when_blocked(controller: AbortController) -> None:
    await anyio.wait_all_tasks_blocked()
    controller.abort("from a task")


async def _cancel_when_blocked(scope: anyio.CancelScope) -> None:
    await anyio.wait_all_tasks_blocked()
    scope.cancel()
