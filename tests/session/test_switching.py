"""The helpers behind /new, /resume and /fork (the switches themselves: test_agent_session)."""

from __future__ import annotations

from picode.session.store.recorder import Restored
from picode.session.switching import saved_thinking


def test_a_saved_thinking_level_is_taken_only_when_picode_knows_it() -> None:
    assert saved_thinking(Restored(thinking="high")) == "high"
    assert saved_thinking(Restored(thinking="turbo")) is None  # a damaged or foreign file
    assert saved_thinking(Restored()) is None
