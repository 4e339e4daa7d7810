"""Frames that move the transcript by scrolling the terminal (tui/terminal_scroll.py): a
terminal fed every frame the app writes shows, after each one, what a full repaint of that
moment shows, cell by cell with its colours."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pyte
from rich.console import Console
from textual._compositor import CompositorUpdate, LayoutUpdate
from textual.widgets import Static

from picode.ai.providers.faux import FauxText, FauxTurn
from picode.tui.app import PicodeApp
from picode.tui.terminal_scroll import ScrollingCompositor
from tests.tui.conftest import SIZE, TuiHarness, open_session, press_now, run, send, wait_until

REPLY = "".join(
    f"## Step {n}\n\nA paragraph with **bold**, *emphasis* and `code` that is long enough to "
    f"wrap on a hundred columns, about step {n} and what it changes in the files.\n\n"
    f"- item one of {n}\n- item two\n\n```python\ndef step_{n}() -> int:\n    return {n}\n```\n\n"
    for n in range(1, 13)
)


class FrameChecker:
    """Feeds each frame the app writes to a terminal emulator and compares its screen with a
    full repaint of the same moment."""

    def __init__(self, app: PicodeApp) -> None:
        self.app = app
        self.console = Console(
            color_system="truecolor", force_terminal=True, width=SIZE[0], height=SIZE[1]
        )
        self.screen = pyte.Screen(*SIZE)
        self.stream = pyte.Stream(self.screen)
        self.frames = 0
        #: Frames after which nothing was waiting to be painted: the screen must be whole.
        self.compared = 0
        self.mismatches: list[str] = []

        # What is on the terminal when the checking starts: all of it.
        self.stream.feed(self._repaint(app.screen))

    def _repaint(self, screen: Any) -> str:
        strips = screen._compositor.render_strips()
        update = LayoutUpdate([[strip] for strip in strips], screen.size.region)
        return update.render_segments(self.console)

    def display(self, screen: Any, renderable: Any) -> None:
        if not isinstance(renderable, CompositorUpdate) or screen is not self.app.screen:
            return
        self.frames += 1
        self.stream.feed(renderable.render_segments(self.console))
        placed = screen._compositor.visible_widgets
        if screen._layout_required or not all(widget.is_attached for widget in placed):
            # Laid out anew, or a widget removed, since this frame was made: Textual still
            # shows the old layout until the next frame, which shows the change.
            return
        pending = _pending(screen)
        self.compared += 1
        full = pyte.Screen(*SIZE)
        pyte.Stream(full).feed(self._repaint(screen))
        for y in range(SIZE[1]):
            cells = zip(_row(self.screen, y), _row(full, y), strict=True)
            wrong = [x for x, (a, b) in enumerate(cells) if a != b and not pending(x, y)]
            if wrong:
                self.mismatches.append(
                    f"frame {self.frames}, row {y}, columns {wrong}: "
                    f"{_text(self.screen, y)!r} / {_text(full, y)!r}"
                )
                return


def _pending(screen: Any) -> Callable[[int, int], bool]:
    """Whether a cell changed after this frame was made: a later frame paints it (Textual's
    own frames lag the same way)."""
    compositor = screen._compositor
    regions = list(compositor._dirty_regions)
    for widget, (region, clip) in compositor.visible_widgets.items():
        for dirty in widget._repaint_regions:
            regions.append(dirty.translate(region.offset).intersection(clip))
    return lambda x, y: any(region.contains(x, y) for region in regions)


def _row(screen: pyte.Screen, y: int) -> list[tuple[object, ...]]:
    line = screen.buffer[y]
    return [
        (cell.data, cell.fg, cell.bg, cell.bold, cell.italics, cell.reverse)
        for cell in (line[x] for x in range(screen.columns))
    ]


def _text(screen: pyte.Screen, y: int) -> str:
    return screen.display[y].rstrip()


def _idle(app: PicodeApp) -> bool:
    return app.session is not None and not app.session.is_running


def _checked(app: PicodeApp) -> FrameChecker:
    checker = FrameChecker(app)
    app._display = checker.display  # type: ignore[method-assign]  # headless: nothing written
    return checker


async def _streaming(app: PicodeApp, pilot: Any) -> tuple[FrameChecker, ScrollingCompositor]:
    """The session open, every frame checked from now on, a reply streaming and already
    scrolling the terminal."""
    await open_session(pilot)
    checker = _checked(app)
    await send(pilot, "go")
    compositor = app.screen._compositor
    assert isinstance(compositor, ScrollingCompositor)
    await wait_until(pilot, lambda: compositor.scrolled_frames > 3, what="scrolling")
    return checker, compositor


async def _to_the_end(app: PicodeApp, pilot: Any) -> None:
    await wait_until(pilot, lambda: _idle(app), what="the end of the reply", timeout=30)
    await pilot.pause()


Scenario = Callable[[PicodeApp, Any, FrameChecker, ScrollingCompositor], Awaitable[None]]


def _while_a_reply_streams(tui: TuiHarness, scenario: Scenario, delay: float = 0.01) -> None:
    """Run ``scenario`` once a reply streaming at a model's pace scrolls the terminal
    (``_streaming``), every frame checked."""
    faux = tui.faux(FauxTurn([FauxText(REPLY)], chunk_size=12, delay=delay))
    app = tui.app(faux)

    async def streaming() -> None:
        async with app.run_test(size=SIZE) as pilot:
            checker, compositor = await _streaming(app, pilot)
            await scenario(app, pilot, checker, compositor)

    run(streaming())


def test_a_streaming_reply_scrolls_the_terminal_and_every_frame_matches_a_full_repaint(
    tui: TuiHarness,
) -> None:
    faux = tui.faux(FauxTurn([FauxText(REPLY)], chunk_size=12, delay=0.01))  # a model's pace
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_session(pilot)
            checker = _checked(app)
            await send(pilot, "go")
            # Set up with the first entry after the first frame (the prompt sent).
            compositor = app.screen._compositor
            assert isinstance(compositor, ScrollingCompositor)
            await wait_until(pilot, lambda: _idle(app) and app.session.messages, timeout=30)
            await pilot.pause()
            assert compositor.scrolled_frames > 10
            assert checker.frames > compositor.scrolled_frames
            assert checker.compared > 10
            assert checker.mismatches == []
            assert "return 12" in "\n".join(checker.screen.display)

    run(scenario())


def test_scrolling_up_while_a_reply_streams_repaints_as_before(tui: TuiHarness) -> None:
    async def scenario(
        app: PicodeApp, pilot: Any, checker: FrameChecker, compositor: ScrollingCompositor
    ) -> None:
        press_now(app, "pageup", "pageup")
        await wait_until(pilot, lambda: not app.transcript.following, what="scrolled up")
        await pilot.pause(0.1)
        scrolled = compositor.scrolled_frames
        await pilot.pause(0.2)
        # Held where the person scrolled to: nothing on screen moves, nothing scrolls.
        assert compositor.scrolled_frames == scrolled
        press_now(app, "ctrl+end")
        await _to_the_end(app, pilot)
        assert checker.mismatches == []

    _while_a_reply_streams(tui, scenario, delay=0.004)


def test_the_command_list_opening_while_a_reply_streams_keeps_the_screen_whole(
    tui: TuiHarness,
) -> None:
    async def scenario(
        app: PicodeApp, pilot: Any, checker: FrameChecker, _compositor: ScrollingCompositor
    ) -> None:
        # The list takes rows from the transcript: a smaller band scrolls on.
        popup = app.completion_popup
        assert popup is not None
        press_now(app, "/")
        await wait_until(pilot, lambda: popup.is_open, what="the list")
        await pilot.pause(0.3)
        press_now(app, "backspace")
        await wait_until(pilot, lambda: not popup.is_open, what="the list to close")
        await _to_the_end(app, pilot)
        assert checker.mismatches == []

    _while_a_reply_streams(tui, scenario)


def test_something_drawn_over_the_transcript_stops_the_scrolling_while_it_is_there(
    tui: TuiHarness,
) -> None:
    async def scenario(
        app: PicodeApp, pilot: Any, checker: FrameChecker, compositor: ScrollingCompositor
    ) -> None:
        over = Static("drawn over the transcript")
        over.styles.overlay = "screen"
        over.styles.position = "absolute"
        over.styles.offset = (20, 6)
        over.styles.width = 40
        over.styles.height = 3
        await app.screen.mount(over)
        await pilot.pause(0.1)
        scrolled = compositor.scrolled_frames
        await pilot.pause(0.3)
        assert compositor.scrolled_frames == scrolled  # repainted as Textual does
        await over.remove()
        await _to_the_end(app, pilot)
        assert compositor.scrolled_frames > scrolled
        assert checker.mismatches == []
        assert "drawn over" not in "\n".join(checker.screen.display)

    _while_a_reply_streams(tui, scenario)


def test_a_scrolling_frame_draws_no_line_of_the_screen_hidden_behind_the_transcript(
    tui: TuiHarness,
) -> None:
    async def scenario(
        app: PicodeApp, pilot: Any, checker: FrameChecker, compositor: ScrollingCompositor
    ) -> None:
        painting = [False]
        render_spans = compositor._render_spans

        def spans_painted(spans: Any) -> Any:
            painting[0] = True
            try:
                return render_spans(spans)
            finally:
                painting[0] = False

        compositor._render_spans = spans_painted  # type: ignore[method-assign]
        screen = app.screen
        render_lines = screen.render_lines
        drawn: list[int] = []

        def screen_lines(crop: Any) -> Any:
            if painting[0]:
                drawn.append(crop.height)
            return render_lines(crop)

        screen.render_lines = screen_lines  # type: ignore[method-assign]
        before = compositor.scrolled_frames
        await _to_the_end(app, pilot)
        assert compositor.scrolled_frames > before + 5
        assert drawn == []  # covered everywhere the frames paint
        assert checker.mismatches == []

    _while_a_reply_streams(tui, scenario)
