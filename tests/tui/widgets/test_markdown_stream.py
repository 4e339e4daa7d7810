"""StreamingMarkdown ends up showing exactly what rendering the whole reply at once shows,
however the reply was cut into fragments; MarkdownView draws, re-wraps and copies."""

from __future__ import annotations

import random
from typing import Any

import pytest
from textual.containers import VerticalScroll
from textual.selection import Selection
from textual.widgets import Static

from picode.tui.themes import builtin_theme_dir, load_theme_file
from picode.tui.widgets import markdown, md_render
from picode.tui.widgets.markdown import MarkdownView, StreamingMarkdown
from picode.tui.widgets.md_layout import layout_rows
from tests.tui.conftest import run
from tests.tui.hosts import ScrollHost
from tests.tui.markdown_samples import signature

DOCUMENT = """# Release notes

Intro with **bold**, *emphasis*, `code` and a [link](https://example.com).
A second line of the same paragraph.

## Changes

- first point
- second point, which is long enough to wrap on a narrow screen
  - nested one
  - nested two

    with a second paragraph
1. ordered
2. list

Setext heading
--------------

> quoted text
> continues here
>
> - a list in a quote

```python
def handler(event: dict) -> int:
    return len(event.get("items", []))
```

| col | value |
|:---|---:|
| a | 1 |
| b | 22 |

***

    indented code

<details>
<summary>html</summary>
</details>

Trailing paragraph with a hard\\
break and a bare URL https://example.org/x.
"""


def streamed(fragments: list[str], flush_after: list[bool]) -> StreamingMarkdown:
    widget = StreamingMarkdown()
    for fragment, flush in zip(fragments, flush_after, strict=True):
        widget.feed(fragment)
        if flush:
            widget.flush()
    widget.finish()
    return widget


def random_fragments(text: str, rng: random.Random, longest: int) -> list[str]:
    fragments = []
    position = 0
    while position < len(text):
        size = rng.randint(1, longest)
        fragments.append(text[position : position + size])
        position += size
    return fragments


@pytest.mark.parametrize("seed", range(12))
def test_random_fragments_end_equal_to_rendering_the_whole_text(seed: int) -> None:
    rng = random.Random(seed)
    fragments = random_fragments(DOCUMENT, rng, longest=rng.choice([3, 12, 40]))
    flushes = [rng.random() < 0.5 for _ in fragments]
    widget = streamed(fragments, flushes)
    whole = MarkdownView(DOCUMENT)
    assert widget.source == DOCUMENT
    assert signature(widget.rows()) == signature(whole.rows())
    for width in (30, 80):
        streamed_lines = layout_rows(widget.rows(), width)
        whole_lines = layout_rows(whole.rows(), width)
        assert [(line.prefix.plain, line.body.plain) for line in streamed_lines] == [
            (line.prefix.plain, line.body.plain) for line in whole_lines
        ]


@pytest.mark.parametrize(
    ("fragments", "what"),
    [
        (["text\n\n``", "`python\nx = 1\n", "``", "`\n\nafter\n"], "a fence marker in pieces"),
        (["- one\n- tw", "o\n", "  - nested\n", "- three\n\nend\n"], "a list across fragments"),
        (["## A head", "ing split mid-line\n", "\nbody\n"], "a heading split mid-line"),
        (["Title\n", "===\n", "\ntext\n"], "a paragraph that turns into a heading"),
        (["| a | b |\n", "|---|---|\n", "| 1 | 2 |\n", "\nafter\n"], "a table row by row"),
        (["para\n", "    not code: a lazy line\n", "\n    code\n"], "an indented line"),
        (["[x][ref] first\n\n", "more\n\n", "[ref]: https://example.com\n"], "a later definition"),
        (["[ref]: https://example.com\n\n", "more\n\n", "[x][ref]\n"], "an earlier definition"),
        (["> quote\n", "lazy continuation\n", "\nout\n"], "a lazy quote line"),
        (["a\r\n\r\nb\r", "\n\r\nc\r\n"], "CRLF line ends"),
    ],
)
def test_tricky_cuts_end_equal_to_the_whole_text(fragments: list[str], what: str) -> None:
    text = "".join(fragments)
    widget = streamed(fragments, [True] * len(fragments))
    assert signature(widget.rows()) == signature(MarkdownView(text).rows()), what


def test_each_flush_shows_the_text_so_far() -> None:
    widget = StreamingMarkdown()
    widget.feed("# Title\n\nfirst para")
    assert widget.source == ""  # buffered until the flush
    widget.flush()
    assert widget.source == "# Title\n\nfirst para"
    assert [row.body.plain for row in widget.rows()] == ["Title", "", "first para"]
    widget.feed("graph\n\n- item")
    widget.flush()
    assert [row.body.plain for row in widget.rows()] == ["Title", "", "first paragraph", "", "item"]
    assert widget.text_length == len(widget.source)


def test_nothing_is_added_after_finish() -> None:
    widget = StreamingMarkdown()
    widget.feed("done")
    widget.finish()
    widget.feed(" more")
    widget.flush()
    assert widget.source == "done"
    assert widget.finished


# --- in an app ------------------------------------------------------------------------------


def _line_text(widget: MarkdownView, y: int) -> str:
    return widget.render_line(y).text.rstrip()


def test_the_view_draws_its_lines_and_rewraps_on_resize() -> None:
    text = "## Heading\n\n- " + "word " * 20 + "\n\n```python\nx = 1\n```\n"
    view = MarkdownView(text)

    async def scenario() -> None:
        app = ScrollHost(view)
        async with app.run_test(size=(40, 30)) as pilot:
            await pilot.pause()
            assert _line_text(view, 0) == "Heading"
            assert _line_text(view, 2).startswith("• word word")
            narrow = view.size.height
            assert narrow == len(view.lines)
            code = view.lines.index(next(line for line in view.lines if line.code))
            strip = view.render_line(code)
            assert strip.text.startswith(" x = 1")
            # The code background runs to the edge; the text's does not.
            code_bg = list(strip)[-1].style
            text_bg = list(view.render_line(0))[-1].style
            assert code_bg is not None and text_bg is not None
            assert code_bg.bgcolor != text_bg.bgcolor
            await pilot.resize_terminal(100, 30)
            await pilot.pause()
            assert view.size.height < narrow
            assert view.size.height == len(view.lines)

    run(scenario())


def test_selecting_all_copies_the_source_text_not_the_screen() -> None:
    view = MarkdownView("A paragraph long enough to wrap twice on thirty columns.\n\n- item\n")

    async def scenario() -> None:
        app = ScrollHost(view)
        async with app.run_test(size=(30, 20)) as pilot:
            await pilot.pause()
            app.screen.selections = {view: Selection(None, None)}
            await pilot.pause()
            assert app.screen.get_selected_text() == (
                "A paragraph long enough to wrap twice on thirty columns.\n\nitem"
            )

    run(scenario())


def test_a_streaming_view_flushes_by_itself_and_grows() -> None:
    widget = StreamingMarkdown()

    async def scenario() -> None:
        app = ScrollHost(widget)
        async with app.run_test(size=(60, 20)) as pilot:
            widget.feed("first paragraph\n\n")
            widget.feed("second")
            for _ in range(100):
                if widget.source.endswith("second"):
                    break
                await pilot.pause(0.01)
            assert widget.source == "first paragraph\n\nsecond"
            await pilot.pause()
            assert widget.size.height == 3
            widget.feed(" paragraph")
            widget.finish()
            await pilot.pause()
            assert _line_text(widget, 2) == "second paragraph"

    run(scenario())


def test_a_theme_change_redraws_with_the_new_colours() -> None:
    view = MarkdownView("```python\nx = 1\n```\n")

    async def scenario() -> None:
        app = ScrollHost(view)
        async with app.run_test(size=(40, 10)) as pilot:
            app.theme = "textual-dark"
            await pilot.pause()
            dark = list(view.render_line(0))[-1].style
            app.theme = "textual-light"
            await pilot.pause()
            light = list(view.render_line(0))[-1].style
            assert dark is not None and light is not None
            assert dark.bgcolor != light.bgcolor

    run(scenario())


def test_a_reply_with_no_text_yet_takes_no_room() -> None:
    widget = StreamingMarkdown()
    after = Static("after")

    async def scenario() -> None:
        app = ScrollHost(widget, after)
        async with app.run_test(size=(40, 10)) as pilot:
            widget.feed("\n\n")
            widget.flush()
            await pilot.pause()
            assert after.region.y == 0
            widget.feed("text")
            widget.flush()
            await pilot.pause()
            assert after.region.y == 2  # the line and the gap below it

    run(scenario())


def test_a_reply_finished_before_it_was_mounted_keeps_its_gap() -> None:
    widget = StreamingMarkdown()
    widget.feed("all of it")
    widget.finish()
    after = Static("after")

    async def scenario() -> None:
        app = ScrollHost(widget, after)
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            assert _line_text(widget, 0) == "all of it"
            assert after.region.y == 2

    run(scenario())


def test_a_reply_that_came_whole_before_its_layout_is_parsed_by_the_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The event router's call that ends the reply returns at once; the parse waits for the
    # layout that shows the reply, so the mounting of its message is not held up by it.
    parses: list[str] = []
    real_parse = markdown.parse

    def counted(parser: Any, source: str, env: dict[str, Any]) -> Any:
        parses.append(source)
        return real_parse(parser, source, env)

    monkeypatch.setattr(markdown, "parse", counted)
    monkeypatch.setattr(md_render, "parse", counted)
    widget = StreamingMarkdown()
    widget.feed("# Title\n\nall of ")
    widget.feed("it\n")
    widget.finish()
    assert parses == []
    after = Static("after")

    async def scenario() -> None:
        app = ScrollHost(widget, after)
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            assert [_line_text(widget, y).strip() for y in range(3)] == ["Title", "", "all of it"]
            assert after.region.y == 4

    run(scenario())
    assert len(parses) == 1


def test_inline_code_stays_readable_with_terminal_colours() -> None:
    view = MarkdownView("`code`")

    async def scenario() -> None:
        app = ScrollHost(view)
        async with app.run_test(size=(40, 10)) as pilot:
            builtin = builtin_theme_dir()
            assert builtin is not None
            app.register_theme(load_theme_file(builtin / "ansi.json"))
            app.theme = "ansi"
            await pilot.pause()
            style = next(iter(view.render_line(0))).style
            assert style is not None
            assert style.color != style.bgcolor

    run(scenario())


def test_a_flush_draws_again_only_the_lines_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    from picode.tui.widgets import markdown

    drawn: list[int] = []
    real = markdown.line_strip

    def counting(line: Any, y: int, *args: Any, **kwargs: Any) -> Any:
        drawn.append(y)
        return real(line, y, *args, **kwargs)

    monkeypatch.setattr(markdown, "line_strip", counting)
    widget = StreamingMarkdown()
    long_paragraph = "word " * 30  # three lines at 40 columns

    async def scenario() -> None:
        app = ScrollHost(widget)
        async with app.run_test(size=(40, 20)) as pilot:
            widget.feed(long_paragraph)
            widget.flush()
            await pilot.pause()
            assert widget.size.height == 4
            drawn.clear()
            widget.feed("more")  # the last line grows; the three above stay as they were
            widget.flush()
            await pilot.pause()
            assert drawn and min(drawn) == 3
            # Same text, other styles: a line that becomes a heading is drawn again.
            widget.feed("\n\nTitle\n")
            widget.flush()
            await pilot.pause()
            title = widget.lines.index(next(ln for ln in widget.lines if ln.body.plain == "Title"))
            plain = widget.render_line(title)
            drawn.clear()
            widget.feed("=====\n")
            widget.flush()
            await pilot.pause()
            assert title in drawn
            assert widget.render_line(title) != plain
            widget.finish()
            await pilot.pause()
            whole = MarkdownView(widget.source)
            await app.query_one(VerticalScroll).mount(whole)
            await pilot.pause()
            assert [widget.render_line(y).text for y in range(widget.size.height)] == [
                whole.render_line(y).text for y in range(whole.size.height)
            ]

    run(scenario())
