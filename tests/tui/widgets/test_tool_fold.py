"""Tool calls folded out of view keep their call and result, not their drawing, and draw
the same again when they come back."""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from picode.ai.providers.faux import FauxToolCall, FauxTurn, text_turn
from picode.tui.widgets.messages import UserMessageView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, opened, run, send, wait_until

TALL = "\n\n".join(f"line {k}" for k in range(20))  # about 40 rows: over a screen
SOURCE = "".join(f"def step_{k}(value: int) -> int:\n    return value + {k}\n" for k in range(150))


def _drawn(view: ToolCallView) -> list[list[str]]:
    """What the header and body draw, line by line."""
    lines: list[list[str]] = []
    for part in view.query(Static):
        lines.append(_lines(part))
    return lines


def _lines(widget: Widget) -> list[str]:
    width, height = widget.size
    return [strip.text for strip in widget.render_lines(Region(0, 0, width, height))]


def _holds_drawing(view: ToolCallView) -> bool:
    body = view.query_one(".tool-body", Static)
    parts = [view, *view.query(Static)]
    return (
        bool(str(body.content))
        or any(part._render_cache.lines for part in parts)
        or any(part._styles_cache._cache for part in parts)
    )


def test_a_tool_call_out_of_view_is_folded_and_comes_back_the_same(tui: TuiHarness) -> None:
    (tui.cwd / "steps.py").write_text(SOURCE, encoding="utf-8")
    turns = [
        FauxTurn([FauxToolCall("read", {"path": "steps.py"})]),
        text_turn("read it"),
        *(text_turn(f"reply {n}\n\n{TALL}") for n in range(6)),
    ]
    app = tui.app(tui.faux(*turns))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await pilot.press("ctrl+o")  # tool output expanded: 300 lines of it
            await send(pilot, "read the file")
            await wait_until(pilot, lambda: app.query(ToolCallView), what="the tool call")
            view = app.query_one(ToolCallView)
            await wait_until(pilot, lambda: view.state == "success", what="the result")
            await wait_until(pilot, lambda: not app.session.is_running, what="the reply")
            await pilot.pause()
            drawn = _drawn(view)
            height = view.size.height
            assert any("return value + 149" in line for line in drawn[1])

            transcript = app.transcript
            entry = next(e for e in transcript.entries if view in e.walk_children(with_self=True))
            for n in range(6):
                count = len(app.session.messages)
                await send(pilot, f"prompt {n}")
                await wait_until(
                    pilot,
                    lambda c=count: (
                        len(app.session.messages) == c + 2 and not app.session.is_running
                    ),
                    what=f"reply {n}",
                )
                if n == 0:  # a plain Static entry, drawn while it is on screen
                    prompt = next(v for v in app.query(UserMessageView) if v.text == "prompt 0")
                    prompt_lines = _lines(prompt)
                    assert prompt_lines
            await wait_until(
                pilot, lambda: transcript.entries.index(entry) < transcript.folded, what="a fold"
            )
            assert view.folded and not entry.display
            assert not _holds_drawing(view)
            assert not prompt.display and not prompt._render_cache.lines
            assert view.result is not None and view.partial is None  # the source, once

            # Expanding and folding tool output while it is folded draws nothing there.
            await pilot.press("ctrl+o")
            await pilot.press("ctrl+o")
            assert not _holds_drawing(view)

            transcript.unfold_all()
            await pilot.pause()
            assert entry.display and not view.folded
            transcript.scroll_to_widget(view, animate=False, top=True)
            await pilot.pause()
            assert view.size.height == height
            assert _drawn(view) == drawn
            # Any widget's rendered lines were dropped too: they come back the same.
            assert _lines(prompt) == prompt_lines

    run(scenario())
