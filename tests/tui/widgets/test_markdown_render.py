"""Markdown → rows (md_render) → screen lines (md_layout): each construct, wrapping, copying."""

from __future__ import annotations

from textual.content import Content, Span
from textual.geometry import Offset
from textual.selection import Selection
from textual.style import Style

from picode.tui.widgets.md_layout import (
    Line,
    layout_rows,
    layout_table,
    place_blocks,
    selected_text,
)
from picode.tui.widgets.md_render import (
    BULLETS,
    CODE_INLINE,
    LINK,
    QUOTE,
    Row,
    highlight_code,
    render_markdown,
)


def rows_of(source: str) -> list[Row]:
    rows, _ = place_blocks(render_markdown(source), None)
    return rows


def lines_of(source: str, width: int) -> list[Line]:
    return layout_rows(rows_of(source), width)


def screen(source: str, width: int) -> list[str]:
    """Lines as they read on screen (prefix, centring, code padding, text)."""
    out = []
    for line in lines_of(source, width):
        pad = " " * (line.indent + (1 if line.code else 0))
        out.append(f"{line.prefix.plain}{pad}{line.body.plain}".rstrip())
    return out


def styles_at(content: Content, text: str) -> list[str | Style]:
    """The styles of every span that covers the first occurrence of ``text``."""
    start = content.plain.index(text)
    end = start + len(text)
    return [span.style for span in content.spans if span.start <= start and span.end >= end]


def test_headings_use_the_heading_token_and_level_one_is_centred() -> None:
    rows = rows_of("# Title\n\n## Sub\n\n#### Small\n")
    title, sub, small = (row for row in rows if row.body)
    assert title.center and not sub.center
    assert "$md-heading bold" in styles_at(title.body, "Title")
    assert "$md-heading bold underline" in styles_at(sub.body, "Sub")
    assert "bold underline" in styles_at(small.body, "Small")
    assert screen("# Title\n", 21)[0] == "        Title"


def test_blocks_are_separated_like_collapsed_margins_and_the_first_has_none() -> None:
    assert screen("## Top\n\ntext\n\n## Next\n\nmore\n", 40) == [
        "Top",
        "",
        "text",
        "",
        "",
        "Next",
        "",
        "more",
    ]


def test_inline_styles_links_and_code() -> None:
    (row,) = rows_of("Some **bold**, *em*, ~~gone~~, `code` and [a link](https://example.com/x).")
    body = row.body
    assert body.plain == "Some bold, em, gone, code and a link."
    assert "bold" in styles_at(body, "bold")
    assert "italic" in styles_at(body, "em")
    assert "strike" in styles_at(body, "gone")
    assert CODE_INLINE in styles_at(body, "code")
    link_styles = styles_at(body, "a link")
    assert LINK in link_styles
    assert any(isinstance(s, Style) and s.link == "https://example.com/x" for s in link_styles)


def test_inner_styles_win_over_the_link_around_them() -> None:
    (row,) = rows_of("[see `f()`](https://example.com)")
    spans = [span for span in row.body.spans if span.start <= 4 and span.end >= 7]
    # Later spans are drawn over earlier ones: the code style comes after the link's.
    assert [span.style for span in spans][-1] == CODE_INLINE


def test_bare_urls_become_links() -> None:
    (row,) = rows_of("see https://example.com/page for more")
    styles = styles_at(row.body, "https://example.com/page")
    assert any(isinstance(s, Style) and s.link == "https://example.com/page" for s in styles)


def test_hard_and_soft_breaks() -> None:
    (row,) = rows_of("one\ntwo  \nthree")
    assert row.body.plain == "one two\nthree"
    assert screen("one\ntwo  \nthree", 40) == ["one two", "three"]


def test_wrapped_list_items_hang_under_their_text() -> None:
    source = (
        "- a first item long enough to wrap\n"
        "- second\n"
        "  - nested item that wraps as well\n"
        "    1. deep\n"
        "- third\n"
    )
    assert screen(source, 20) == [
        f"{BULLETS[0]}a first item long",
        "  enough to wrap",
        f"{BULLETS[0]}second",
        f"  {BULLETS[1]}nested item that",
        "    wraps as well",
        "    1. deep",
        f"{BULLETS[0]}third",
    ]


def test_ordered_lists_keep_their_start_and_align_their_numbers() -> None:
    source = "".join(f"{n}. item {n}\n" for n in range(9, 12))
    assert screen(source, 40) == [" 9. item 9", "10. item 10", "11. item 11"]


def test_a_loose_list_keeps_blank_lines_between_items() -> None:
    assert screen("- one\n\n- two\n", 40) == [f"{BULLETS[0]}one", "", f"{BULLETS[0]}two"]


def test_a_code_block_in_a_tight_list_has_a_blank_line_below_as_above() -> None:
    source = "1. install:\n   ```sh\n   pip install x\n   ```\n2. run it\n3. done\n"
    assert screen(source, 40) == [
        "1. install:",
        "",
        "    pip install x",
        "",
        "2. run it",
        "3. done",
    ]
    # The last item's margin is the list's own: nothing is added after it.
    assert screen("- a\n  ```\n  x\n  ```\n", 40)[-1] == "   x"


def test_block_quotes_have_a_bar_on_every_line_and_the_quote_colour() -> None:
    source = "> a quote long enough to wrap around\n>\n> second paragraph\n"
    assert screen(source, 20) == [
        "▌ a quote long",
        "▌ enough to wrap",
        "▌ around",
        "▌",
        "▌ second paragraph",
    ]
    quoted = [row for row in rows_of(source) if row.body]
    assert all(QUOTE in styles_at(row.body, row.body.plain[:3]) for row in quoted)


def test_horizontal_rule_spans_the_width() -> None:
    assert screen("above\n\n---\n\nbelow\n", 12) == ["above", "", "─" * 12, "", "below"]


def test_tables_align_their_columns() -> None:
    source = "| Name | Size | Kind |\n|:--|--:|:-:|\n| a | 1 | x |\n| bbbb | 22222 | yy |\n"
    assert screen(source, 60) == [
        "Name │  Size │ Kind",
        "─────┼───────┼─────",
        "a    │     1 │  x",
        "bbbb │ 22222 │  yy",
    ]
    (row,) = rows_of(source)
    assert row.table is not None
    assert "bold $text-primary" in styles_at(row.table.header[0], "Name")


def test_a_table_wider_than_the_screen_wraps_its_widest_column() -> None:
    source = "| key | note |\n|---|---|\n| k | " + "word " * 12 + "|\n"
    (row,) = rows_of(source)
    assert row.table is not None
    lines = layout_table(row.table, 30)
    assert all(line.cell_length <= 30 for line in lines)
    assert len(lines) > 3
    assert " ".join(line.plain.split("│")[1].strip() for line in lines[2:]) == " ".join(
        ["word"] * 12
    )


def test_html_blocks_are_shown_as_text() -> None:
    assert screen("<div>\n<b>hi</b>\n</div>\n", 40) == ["<div>", "<b>hi</b>", "</div>"]


def test_fenced_code_is_highlighted_with_the_theme_syntax_tokens() -> None:
    rows = rows_of("```python\ndef handler(x):\n    return 1\n```\n")
    assert all(row.code for row in rows)
    assert [row.body.plain for row in rows] == ["def handler(x):", "    return 1"]
    assert "$syntax-keyword" in styles_at(rows[0].body, "def")
    assert "$syntax-function" in styles_at(rows[0].body, "handler")
    assert "$syntax-number" in styles_at(rows[1].body, "1")


def test_unknown_or_missing_language_shows_the_code_plainly() -> None:
    for source in ("```nosuchlanguage\ndef f(): pass\n```\n", "```\ndef f(): pass\n```\n"):
        (row,) = rows_of(source)
        assert row.code
        assert row.body.plain == "def f(): pass"
        assert not [span for span in row.body.spans if str(span.style).startswith("$syntax")]


def test_indented_code_and_tabs() -> None:
    (row,) = rows_of("    indented\tcode\n")
    assert row.code
    assert row.body.plain == "indented    code"
    assert highlight_code("a\tb", "text").plain == "a   b"


def test_long_code_lines_fold_and_copy_back_exactly() -> None:
    code = "x = '" + "abcdefghij" * 5 + "'"
    lines = lines_of(f"```python\n{code}\n```\n", 22)
    assert len(lines) > 2
    assert all(line.code and line.body.cell_length <= 20 for line in lines)
    assert selected_text(lines, Selection(None, None)) == code


def test_copying_a_wrapped_paragraph_gives_its_text_not_the_screen_lines() -> None:
    lines = lines_of("A paragraph  that wraps\nacross several narrow lines.\n\nNext.\n", 12)
    assert len(lines) > 4
    assert selected_text(lines, Selection(None, None)) == (
        "A paragraph that wraps across several narrow lines.\n\nNext."
    )
    # A selection from the middle of the second screen line to the third.
    part = selected_text(lines, Selection(Offset(2, 1), Offset(3, 2)))
    assert part == lines[1].body.plain[2:] + lines[2].joiner + lines[2].body.plain[:3]


def test_copying_list_items_leaves_out_bullets() -> None:
    lines = lines_of("- one\n- two\n", 20)
    assert selected_text(lines, Selection(None, None)) == "one\ntwo"


def test_spans_of_a_highlighted_block_cover_its_text_exactly() -> None:
    code = 'def f():\n    return "x"  # note\n'
    content = highlight_code(code, "python")
    assert content.plain == code
    assert all(0 <= span.start < span.end <= len(code) for span in content.spans)
    assert isinstance(content.spans[0], Span)
