"""Images dragged into the terminal arrive as a paste of their paths; the editor turns such a
paste into ``@`` mentions, so they go with the message (``tui/dropped_files.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from picode.ai.providers.faux import text_turn
from picode.ai.types import ImageContent
from picode.tui.dropped_files import dropped_images
from tests.tui.conftest import SIZE, TuiHarness, opened, run, wait_until

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 32


@pytest.fixture
def shots(tmp_path: Path) -> tuple[Path, Path]:
    spaced = tmp_path / "Screen Shot 1.png"
    spaced.write_bytes(PNG)
    plain = tmp_path / "photo.jpg"
    plain.write_bytes(JPEG)
    return spaced, plain


def test_the_ways_terminals_paste_a_dropped_file_become_mentions(
    shots: tuple[Path, Path],
) -> None:
    spaced, plain = shots
    escaped = str(spaced).replace(" ", "\\ ")
    uri = "file://" + str(spaced).replace(" ", "%20")
    want_spaced = f'@"{spaced}" '
    assert dropped_images(f"'{spaced}' ") == want_spaced  # GNOME Terminal, Konsole
    assert dropped_images(escaped) == want_spaced  # macOS Terminal, iTerm2
    assert dropped_images(uri) == want_spaced  # a file manager's address
    assert dropped_images(f"{plain}") == f"@{plain} "
    both = dropped_images(f"'{spaced}' '{plain}'")
    assert both == f'@"{spaced}" @{plain} '


def test_any_other_paste_stays_text(tmp_path: Path, shots: tuple[Path, Path]) -> None:
    spaced, plain = shots
    notes = tmp_path / "notes.txt"
    notes.write_text("not an image")
    for text in (
        "hello world",
        str(notes),  # a path, but not an image: the model can read it itself
        f"{plain} {notes}",  # one of them is not an image
        f"look at {plain}",  # a sentence
        "photo.jpg",  # relative: typed, not dropped
        str(tmp_path / "gone.png"),
        f"'{spaced}",  # an unclosed quote
        "file://other-host" + str(plain),
        "",
    ):
        assert dropped_images(text) is None, text


def test_a_dropped_screenshot_goes_with_the_message(
    tui: TuiHarness, shots: tuple[Path, Path]
) -> None:
    spaced, _ = shots
    faux = tui.faux(text_turn("I see it."))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            app.editor.insert("what is in ")
            app.post_message(events.Paste(f"'{spaced}' "))
            await wait_until(pilot, lambda: '@"' in app.editor.text, what="the mention")
            assert app.editor.text == f'what is in @"{spaced}" '
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(session.messages) == 2, what="the reply")
            sent = session.messages[0].content
            assert isinstance(sent, list)
            assert any(isinstance(block, ImageContent) for block in sent)

    run(scenario())
