"""A provider module whose import lasts until the test lets it finish, as a slow SDK
import does on a loaded machine."""

from __future__ import annotations

from tests.tui.fake_sdk_module import GATE

if not GATE.wait(30):
    raise RuntimeError("the test never let the slow import finish")
