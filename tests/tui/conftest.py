"""What every TUI test folder shares: ``run``, ``wait_until`` and a pinned clock, and the real
app on a real AgentSession driven by the scripted provider (the ``tui`` fixture); tiny apps
that host a widget or a screen are in ``hosts.py``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from picode.agent.tool import AgentTool
from picode.ai.models import builtin_registry
from picode.ai.providers.faux import FauxProvider
from picode.session.agent_session import AgentSession
from picode.session.config.settings import Settings
from picode.session.options import SessionOptions
from picode.session.paths import resolve_paths
from picode.tools import coding_tools
from picode.tui.app import PicodeApp
from picode.tui.config import TuiConfig
from tests.support import FakeClock as FakeClock
from tests.support import pump_until
from tests.support import run as run

#: Tests here wait on an app: the Textual flavour, under the usual name.
wait_until = pump_until

SIZE = (100, 30)


class TuiHarness:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.cwd = root / "project"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.paths = resolve_paths({"PICODE_HOME": str(root / "home")})
        self.providers: list[FauxProvider] = []
        self.clock = FakeClock()

    def faux(self, *turns: Any, **kwargs: Any) -> FauxProvider:
        provider = FauxProvider(turns, **kwargs)
        self.providers.append(provider)
        return provider

    def options(
        self,
        faux: FauxProvider,
        *,
        settings: Settings | None = None,
        extra_tools: Sequence[AgentTool] = (),
        **kwargs: Any,
    ) -> SessionOptions:
        kwargs.setdefault("load_extensions", False)
        return SessionOptions(
            cwd=self.cwd,
            paths=self.paths,
            settings=settings or Settings(),
            registry=builtin_registry(),
            model=faux.model,
            tools=[*coding_tools(self.cwd), *extra_tools],
            **kwargs,
        )

    def app(
        self,
        faux: FauxProvider,
        *,
        theme: str | None = None,
        settings: Settings | None = None,
        extra_tools: Sequence[AgentTool] = (),
        options: dict[str, Any] | None = None,
        **config: Any,
    ) -> PicodeApp:
        session_options = self.options(
            faux, settings=settings, extra_tools=extra_tools, **(options or {})
        )
        tui = TuiConfig.from_options(session_options, theme=theme)
        tui.cwd_label = "~/project"
        tui.branch = "main"
        tui.clock = self.clock
        tui.warm_provider = False
        tui.version = "0.0.0"
        for key, value in config.items():
            setattr(tui, key, value)
        return PicodeApp(tui)

    def close(self) -> None:
        for provider in self.providers:
            provider.close()


@pytest.fixture
def tui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TuiHarness]:
    # A HOME of its own (the session reads ~/.agents/skills and ~/.claude/skills); a test
    # asking for ``home`` after this fixture gets that one.
    (tmp_path / "harness-home").mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(tmp_path / "harness-home"))
    harness = TuiHarness(tmp_path)
    yield harness
    harness.close()


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*text)


async def send(pilot: Any, text: str) -> None:
    """Put ``text`` in the editor (as a paste would) and press Enter.

    Typing key by key costs a frame per key; the editor reacts to an insert the same way
    (its change events drive completion), and Enter takes the same path as a person's.
    """
    pilot.app.editor.insert(text)
    await pilot.pause()
    await pilot.press("enter")


async def opened(pilot: Any) -> PicodeApp:
    """The app, once its session is open."""
    app: PicodeApp = pilot.app
    await wait_until(pilot, lambda: app.session is not None, what="the session")
    return app


async def open_session(pilot: Any) -> AgentSession:
    """The app's session, once it is open."""
    app = await opened(pilot)
    session = app.session
    assert session is not None
    return session


async def start_turn(pilot: Any, text: str) -> AgentSession:
    """Type ``text``, press Enter without waiting for the app to go idle, and return the
    session once its turn is running."""
    session = await open_session(pilot)
    await type_text(pilot, text)
    press_now(pilot.app, "enter")
    await wait_until(pilot, lambda: session.is_running, what="the turn running")
    return session


def hold_open(app: PicodeApp) -> asyncio.Event:
    """The session opens only once the returned event is set (typing during start-up)."""
    gate = asyncio.Event()
    real_open = app.config.open_session

    async def slow_open(*args: Any, **kwargs: Any) -> AgentSession:
        await gate.wait()
        return await real_open(*args, **kwargs)

    app.config.open_session = slow_open  # type: ignore[assignment]
    return gate


async def screen_of(pilot: Any, kind: type) -> Any:
    """The screen of type ``kind`` once it is on top and mounted (a picker, a prompt)."""
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, kind), what=kind.__name__)
    screen = app.screen
    await wait_until(pilot, lambda: screen.is_mounted)
    return screen


def notices(app: PicodeApp) -> list[str]:
    """The text of every notice in the transcript, oldest first."""
    from picode.tui.widgets.notice import NoticeView

    return [view.text for view in app.query(NoticeView)]


def has_notice(app: PicodeApp, part: str) -> bool:
    return any(part in text for text in notices(app))


def press_now(app: Any, *keys: str) -> None:
    """Queue key presses without waiting for the app to go idle (``Pilot.press`` waits up to
    a second while the app is busy streaming, which would hide what happens meanwhile)."""
    for key in keys:
        app.simulate_key(key)
