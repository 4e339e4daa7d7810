"""The welcome line's key hints."""

from __future__ import annotations

import pytest

from picode.tui.widgets.notice import KEY_HINTS, hint_lines


@pytest.mark.parametrize("width", [20, 40, 57, 80, 119, 200])
def test_hints_wrap_between_hints_never_inside_one(width: int) -> None:
    lines = hint_lines(KEY_HINTS, width)
    assert " · ".join(line.removesuffix(" ·") for line in lines) == " · ".join(KEY_HINTS)
    for line in lines:
        pieces = line.removesuffix(" ·").split(" · ")
        assert all(piece in KEY_HINTS for piece in pieces), line  # whole hints only
        assert len(line) <= width or len(pieces) == 1  # only a lone hint may overflow
