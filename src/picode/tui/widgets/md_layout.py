"""Rendered Markdown rows → screen lines at a width, and lines → strips.

Wrapping is done here rather than by Textual so that a list item's wrapped lines hang
under its text, code sits on a background as wide as the screen, and a reply of any length
stays one widget that re-wraps only what changed. Each line remembers how it joins the one
before (a new line, the space a wrap swallowed, nothing for folded code), so text copied
from a selection reads like the source rather than like the screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style

from picode.tui.widgets.md_render import EMPTY, RULE_STYLE, Block, Row, Table

CODE_PADDING = 1
COLUMN_SEPARATOR = " │ "
HEADER_SEPARATOR = "─┼─"
MIN_COLUMN = 3


@dataclass(frozen=True, slots=True)
class Line:
    prefix: Content
    body: Content
    #: What joins this line's text to the previous line's when copied.
    joiner: str = "\n"
    code: bool = False
    #: Blank cells between the prefix and the body (centred headings).
    indent: int = 0


def blank_rows(count: int) -> list[Row]:
    return [Row() for _ in range(count)]


def place_blocks(blocks: Iterable[Block], previous: Block | None) -> tuple[list[Row], Block | None]:
    """Rows for ``blocks`` following ``previous`` (None: they open the reply, whose first
    block's top margin is dropped), with the blank lines between them."""
    rows: list[Row] = []
    for block in blocks:
        if previous is not None:
            rows.extend(blank_rows(max(previous.bottom, block.top)))
        rows.extend(block.rows)
        previous = block
    return rows, previous


def layout_rows(rows: Sequence[Row], width: int) -> list[Line]:
    lines: list[Line] = []
    for row in rows:
        lines.extend(layout_row(row, width))
    return lines


def layout_row(row: Row, width: int) -> list[Line]:
    available = max(1, width - row.first.cell_length)
    if row.rule:
        return [Line(row.first, Content.styled("─" * available, RULE_STYLE))]
    if row.table is not None:
        table_lines = layout_table(row.table, available)
        return [
            Line(row.first if index == 0 else row.rest, line)
            for index, line in enumerate(table_lines)
        ]
    if row.code:
        pieces = row.body.fold(max(1, available - 2 * CODE_PADDING)) if row.body else [EMPTY]
        return [
            Line(row.first if index == 0 else row.rest, piece, "" if index else "\n", code=True)
            for index, piece in enumerate(pieces)
        ]
    if not row.body:
        return [Line(row.first, EMPTY)]
    pieces = row.body.wrap(available)
    plain = row.body.plain
    lines: list[Line] = []
    position = 0
    for index, piece in enumerate(pieces):
        joiner = "\n"
        found = plain.find(piece.plain, position) if piece.plain else -1
        if index and found >= 0:
            joiner = plain[position:found]
        if found >= 0:
            position = found + len(piece.plain)
        elif index:
            joiner = " "
        indent = max(0, (available - piece.cell_length) // 2) if row.center else 0
        lines.append(Line(row.first if index == 0 else row.rest, piece, joiner, indent=indent))
    return lines


def layout_table(table: Table, width: int) -> list[Content]:
    columns = max(len(table.header), *(len(cells) for cells in table.rows), 1)
    all_rows = [table.header, *table.rows]
    widths = [1] * columns
    for cells in all_rows:
        for column, cell in enumerate(cells):
            widths[column] = max(widths[column], cell.cell_length)
    budget = width - len(COLUMN_SEPARATOR) * (columns - 1)
    # Narrow the widest column a cell at a time until the table fits (cells then wrap).
    while sum(widths) > budget:
        widest = max(range(columns), key=widths.__getitem__)
        if widths[widest] <= MIN_COLUMN:
            break
        widths[widest] -= 1
    aligns = [*table.aligns, *["left"] * columns][:columns]
    separator = Content.styled(COLUMN_SEPARATOR, RULE_STYLE)
    lines = _table_row(table.header, widths, aligns, separator)
    rule = Content.styled(HEADER_SEPARATOR.join("─" * size for size in widths), RULE_STYLE)
    lines.append(rule)
    for cells in table.rows:
        lines.extend(_table_row(cells, widths, aligns, separator))
    return lines


def _table_row(
    cells: Sequence[Content], widths: list[int], aligns: list[str], separator: Content
) -> list[Content]:
    wrapped = [
        (cells[column].wrap(size) if column < len(cells) and cells[column] else [EMPTY])
        for column, size in enumerate(widths)
    ]
    height = max(len(pieces) for pieces in wrapped)
    lines: list[Content] = []
    for index in range(height):
        parts = []
        for column, pieces in enumerate(wrapped):
            piece = pieces[index] if index < len(pieces) else EMPTY
            parts.append(_aligned(piece, widths[column], aligns[column]))
        lines.append(separator.join(parts).rstrip())
    return lines


def _aligned(piece: Content, size: int, align: str) -> Content:
    space = max(0, size - piece.cell_length)
    if align == "right":
        return piece.pad_left(space)
    if align == "center":
        return piece.pad(space // 2, space - space // 2)
    return piece.pad_right(space)


# --- drawing ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Paint:
    """What a line is drawn on: the widget's style, the code background, and the resolver
    for theme tokens in the lines' styles."""

    base: Style
    code: Style
    parse_style: Callable[[str | Style], Style]


@lru_cache(maxsize=1024)
def _with_offset(style: Style, x: int, y: int) -> RichStyle:
    """``style`` with the cell offset Textual's selection reads. Cached: a streaming reply
    draws its last lines again at each flush, with the same styles at the same places, and
    each new Rich style pickles its meta."""
    return style.rich_style_with_offset(x, y)


def line_strip(
    line: Line,
    y: int,
    width: int,
    paint: Paint,
    selected: tuple[int, int] | None = None,
    selection_style: Style | None = None,
) -> Strip:
    """One screen line. Every cell carries the ``offset`` Textual's text selection reads:
    prefix cells point at the start of the line's text, so a selection that starts on a
    bullet starts with the item."""
    segments: list[Segment] = []
    cells = 0
    start_style = _with_offset(paint.base, 0, y)
    for text, style in line.prefix.render(paint.base, end="", parse_style=paint.parse_style):
        rich_style = _with_offset(style, 0, y)
        segments.extend(Segment(character, rich_style) for character in text)
        cells += cell_len(text)
    under = paint.base + paint.code if line.code else paint.base
    lead = line.indent + (CODE_PADDING if line.code else 0)
    if lead:
        lead_style = _with_offset(under, 0, y) if line.code else start_style
        segments.extend(Segment(" ", lead_style) for _ in range(lead))
        cells += lead
    body = line.body
    if selected is not None and selection_style is not None:
        start, end = selected
        body = body.stylize(selection_style, start, len(body.plain) if end == -1 else end)
    x = 0
    for text, style in body.render(under, end="", parse_style=paint.parse_style):
        segments.append(Segment(text, _with_offset(style, x, y)))
        x += len(text)
        cells += cell_len(text)
    if cells < width:
        segments.append(Segment(" " * (width - cells), _with_offset(under, x, y)))
    strip = Strip(segments)
    return strip.crop(0, width) if strip.cell_length > width else strip


def selected_text(lines: Sequence[Line], selection: Selection) -> str:
    """The text of ``selection`` (offsets: line index, character in the line's body)."""
    if not lines:
        return ""
    last = len(lines) - 1
    start = selection.start or Offset(0, 0)
    end = selection.end or Offset(len(lines[last].body.plain), last)
    parts: list[str] = []
    for y in range(max(0, start.y), min(end.y, last) + 1):
        text = lines[y].body.plain
        first = start.x if y == start.y else 0
        stop = end.x if y == end.y else len(text)
        if y > start.y:
            parts.append(lines[y].joiner)
        parts.append(text[first:stop])
    return "".join(parts)
