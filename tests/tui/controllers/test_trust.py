"""The trust controller asks only when the folder has something to decide, and loads the
dialog only then (it is not needed on the way to the first answer)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from picode.session.safety.trust import ProjectTrust
from picode.tui.controllers.trust import TrustController


class FakeTrustHost:
    def __init__(self) -> None:
        self.reports: list[tuple[str, str]] = []
        self.asked: list[Any] = []

    def report(self, text: str, level: str = "info") -> None:
        self.reports.append((text, level))

    async def push_screen_wait(self, screen: Any) -> Any:
        self.asked.append(screen)
        return "later"


def _settle(trust: ProjectTrust, host: FakeTrustHost) -> ProjectTrust:
    controller = TrustController(host, assess=lambda: trust, paths=lambda: None)  # type: ignore[arg-type]
    return asyncio.run(controller.settle())


def test_nothing_to_decide_neither_asks_nor_loads_the_dialog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "picode.tui.trust_prompt", raising=False)
    host = FakeTrustHost()
    trust = ProjectTrust(folder=tmp_path, items=[], fingerprint="", problems=["odd file"])

    assert _settle(trust, host) is trust
    assert host.asked == []
    assert host.reports == [("odd file", "warning")]
    assert "picode.tui.trust_prompt" not in sys.modules


def test_something_to_decide_asks_with_the_dialog(tmp_path: Path) -> None:
    from picode.session.safety.trust import TrustItem
    from picode.tui.trust_prompt import TrustScreen

    host = FakeTrustHost()
    item = TrustItem(".picode/SYSTEM.md", "replaces picode's system prompt")
    trust = ProjectTrust(folder=tmp_path, items=[item], fingerprint="f")

    assert _settle(trust, host) is trust
    assert len(host.asked) == 1 and isinstance(host.asked[0], TrustScreen)
