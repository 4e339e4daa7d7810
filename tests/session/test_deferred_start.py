"""MCP and the checkpoint warm-up can wait for the first request: opened with ``defer``,
the session starts them once the provider is prepared with nothing asked, or once the
first request is answered; opened without it, at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.ai.models import builtin_registry
from picode.ai.providers.faux import FauxProvider, text_turn
from picode.session.agent_session import AgentSession
from picode.session.checkpointing import CheckpointKeeper
from picode.session.config.settings import Settings
from picode.session.options import SessionOptions
from picode.tools import coding_tools
from tests.session.conftest import SessionHarness, run


@pytest.fixture
def warmed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each checkpoint warm-up started, recorded as it starts."""
    started: list[str] = []
    real = CheckpointKeeper.warm

    def warm(self: CheckpointKeeper) -> None:
        started.append("warm")
        real(self)

    monkeypatch.setattr(CheckpointKeeper, "warm", warm)
    return started


async def _open(harness: SessionHarness, faux: FauxProvider, *, defer: bool) -> AgentSession:
    cwd: Path = harness.cwd
    options = SessionOptions(
        cwd=cwd,
        paths=harness.paths,
        settings=Settings(),
        registry=builtin_registry(),
        model=faux.model,
        tools=coding_tools(cwd),
        load_extensions=False,
    )
    return await AgentSession.open(options, defer=defer)


def test_without_defer_the_warm_up_starts_as_the_session_opens(
    harness: SessionHarness, warmed: list[str]
) -> None:
    async def scenario() -> None:
        session = await _open(harness, harness.faux(), defer=False)
        assert warmed == ["warm"]
        await session.close()

    run(scenario())


def test_deferred_work_starts_once_the_provider_is_prepared(
    harness: SessionHarness, warmed: list[str]
) -> None:
    async def scenario() -> None:
        session = await _open(harness, harness.faux(), defer=True)
        assert warmed == []
        await session.prepare_provider()
        assert warmed == ["warm"]
        await session.prepare_provider()  # a later model switch starts nothing again
        assert warmed == ["warm"]
        await session.close()

    run(scenario())


def test_deferred_work_starts_when_the_first_reply_does(
    harness: SessionHarness, warmed: list[str]
) -> None:
    faux = harness.faux(text_turn("hello back"))
    seen_at_reply: list[list[str]] = []

    async def scenario() -> None:
        session = await _open(harness, faux, defer=True)
        assert warmed == []

        def on_event(event: object) -> None:
            if type(event).__name__ == "MessageEnd":
                seen_at_reply.append(list(warmed))

        session.subscribe(on_event)
        await session.prompt("hi")
        await session.close()

    run(scenario())
    # The user's message ends before the request; the reply's end comes after it started.
    assert seen_at_reply[0] == []
    assert seen_at_reply[-1] == ["warm"]
