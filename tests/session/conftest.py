"""Helpers for AgentSession tests: a session on a FauxProvider inside a temp PICODE_HOME."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from picode.ai.models import builtin_registry
from picode.ai.providers.faux import FauxProvider
from picode.session.agent_session import AgentSession, SessionOptions
from picode.session.config.settings import Settings
from picode.session.paths import Paths, resolve_paths
from picode.tools import coding_tools
from tests.support import run as run
from tests.support import wait_until as wait_until


class SessionHarness:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.cwd = root / "project"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.paths = resolve_paths({"PICODE_HOME": str(self.home)})
        self.events: list[Any] = []
        self.providers: list[FauxProvider] = []

    def faux(self, *turns: Any, **kwargs: Any) -> FauxProvider:
        provider = FauxProvider(turns, **kwargs)
        self.providers.append(provider)
        return provider

    async def open(
        self, faux: FauxProvider, *, settings: Settings | None = None, **kwargs: Any
    ) -> AgentSession:
        cwd = kwargs.pop("cwd", self.cwd)
        kwargs.setdefault("tools", coding_tools(cwd))
        options = SessionOptions(
            cwd=cwd,
            paths=self.paths,
            settings=settings or Settings(),
            registry=builtin_registry(),
            model=faux.model,
            load_extensions=kwargs.pop("load_extensions", False),
            **kwargs,
        )
        session = await AgentSession.open(options)
        session.subscribe(self.events.append)
        return session

    def of_type(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]

    def close(self) -> None:
        for provider in self.providers:
            provider.close()


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SessionHarness]:
    # A HOME of its own: the session reads ~/.agents/skills and ~/.claude/skills.
    (tmp_path / "harness-home").mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(tmp_path / "harness-home"))
    h = SessionHarness(tmp_path)
    yield h
    h.close()


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    """An isolated PICODE_HOME (config, data, cache) for config and trust tests."""
    return resolve_paths({"PICODE_HOME": str(tmp_path / "home")})


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """An empty project folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder
