"""Markdown → rows of styled text, for replies drawn without one widget per block.

A reply is parsed with markdown-it into top-level blocks; each block becomes a few ``Row``
objects (a line of ``Content`` plus the prefix that nesting gives it: bullets, numbers,
quote bars) and the blank lines it wants around it. Rows do not depend on the width:
``md_layout`` wraps them when the width is known, so a block is rendered once however often
the screen is laid out. Styles are theme tokens (``$md-heading``, ``$syntax-keyword``…),
resolved when the rows are drawn, so a theme change needs no re-render.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Token
from pygments.util import ClassNotFound
from textual.content import Content, Span
from textual.style import Style

EMPTY = Content("")
TAB_SIZE = 4

HEADING_STYLES = {
    "h1": "$md-heading bold",
    "h2": "$md-heading bold underline",
    "h3": "$md-heading bold",
    "h4": "bold underline",
    "h5": "bold",
    "h6": "$muted bold",
}
CODE_INLINE = "$md-code on $md-code 10%"
CODE_INLINE_ANSI = "$md-code"
LINK = "$md-link underline"
QUOTE = "$md-quote"
QUOTE_BAR = Content.styled("▌ ", "$md-quote")
BULLET_STYLE = "$text-primary"
BULLETS = ("• ", "▪ ", "‣ ", "⭑ ", "◦ ")
RULE_STYLE = "$muted"
TABLE_HEADER = "bold $text-primary"
INLINE_STYLES = {"strong": "bold", "em": "italic", "s": "strike"}

#: Token type → style for code, walked up the token hierarchy (Textual's convention).
SYNTAX_STYLES: dict[Any, str] = {
    Token.Comment: "$syntax-comment italic",
    Token.Error: "$syntax-error",
    Token.Generic.Strong: "bold",
    Token.Generic.Emph: "italic",
    Token.Generic.Error: "$syntax-error",
    Token.Generic.Heading: "$md-heading bold",
    Token.Generic.Subheading: "$md-heading",
    Token.Generic.Inserted: "$diff-added",
    Token.Generic.Deleted: "$diff-removed",
    Token.Keyword: "$syntax-keyword",
    Token.Keyword.Constant: "$syntax-constant",
    Token.Keyword.Namespace: "$syntax-keyword",
    Token.Keyword.Type: "$syntax-class",
    Token.Literal.Number: "$syntax-number",
    Token.Literal.String: "$syntax-string",
    Token.Literal.String.Doc: "$syntax-comment italic",
    Token.Name: "$syntax-name",
    Token.Name.Attribute: "$syntax-function",
    Token.Name.Builtin: "$syntax-builtin",
    Token.Name.Builtin.Pseudo: "$syntax-builtin italic",
    Token.Name.Class: "$syntax-class bold",
    Token.Name.Constant: "$syntax-constant",
    Token.Name.Decorator: "$syntax-decorator",
    Token.Name.Function: "$syntax-function",
    Token.Name.Function.Magic: "$syntax-function",
    Token.Name.Tag: "$syntax-keyword",
    Token.Name.Variable: "$syntax-name",
    Token.Number: "$syntax-number",
    Token.Operator: "$syntax-operator",
    Token.Operator.Word: "$syntax-keyword",
    Token.String: "$syntax-string",
    Token.Whitespace: "",
}

_WHITESPACE = re.compile(r"\s+")
_ALIGN = re.compile(r"text-align:\s*(left|center|right)")


@dataclass(frozen=True, slots=True)
class Table:
    """Cells of a table; laid out (column widths, wrapping) when the width is known."""

    header: tuple[Content, ...]
    rows: tuple[tuple[Content, ...], ...]
    aligns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Row:
    """One logical line: wrapped to the width when laid out.

    ``first`` prefixes its first screen line and ``rest`` the lines it wraps onto (same
    width: a bullet, then spaces). Code rows fold at the width keeping every character and
    sit on the code background; ``center`` centres each line (level-1 headings); a rule
    is as wide as the screen; a table row holds a whole table, laid out to the width.
    """

    body: Content = EMPTY
    first: Content = EMPTY
    rest: Content = EMPTY
    code: bool = False
    center: bool = False
    rule: bool = False
    table: Table | None = None

    def prefixed(self, first: Content, rest: Content) -> Row:
        return replace(self, first=first + self.first, rest=rest + self.rest)


@dataclass(frozen=True, slots=True)
class Block:
    """A rendered block: its rows and the blank lines it wants above and below (the larger
    of two neighbours' wishes is used, like collapsing CSS margins)."""

    rows: tuple[Row, ...]
    top: int = 0
    bottom: int = 1
    kind: str = ""


@lru_cache(maxsize=1)
def make_parser() -> MarkdownIt:
    """The one parser every reply shares: it keeps no state between ``parse`` calls (link
    definitions live in the ``env`` each caller passes), and one per reply was ~20 kB each
    that a long conversation kept for every reply it had shown."""
    # The same flavour Textual's Markdown widget used: tables, strikethrough, bare URLs.
    return MarkdownIt("gfm-like")


def parse(parser: MarkdownIt, source: str, env: dict[str, Any]) -> list[SyntaxTreeNode]:
    """The top-level blocks of ``source`` (each knows its lines in ``.map``); ``env``
    keeps link reference definitions between calls."""
    return list(SyntaxTreeNode(parser.parse(source, env)).children)


def render_markdown(source: str) -> list[Block]:
    """All of ``source`` at once (finished replies, and what streaming must end up equal to)."""
    return [render_block(node) for node in parse(make_parser(), source, {})]


# --- blocks ---------------------------------------------------------------------------------


def render_block(node: SyntaxTreeNode, depth: int = 0) -> Block:
    """One block; ``depth`` counts the bullet lists around it (it picks the bullet)."""
    kind = node.type
    if kind == "heading":
        style = HEADING_STYLES.get(node.tag, "bold")
        body = _inline_content(node).stylize_before(style)
        top = 2 if node.tag in ("h1", "h2") else 1
        return Block((Row(body, center=node.tag == "h1"),), top, 1, kind)
    if kind == "paragraph":
        return Block((Row(_inline_content(node)),), 0, 0 if node.hidden else 1, kind)
    if kind in ("fence", "code_block"):
        language = node.info.split(maxsplit=1)[0] if node.info.strip() else ""
        return Block(_code_rows(node.content, language), 1, 1, kind)
    if kind in ("bullet_list", "ordered_list"):
        return Block(tuple(_list_rows(node, depth)), 0, 1, kind)
    if kind == "blockquote":
        rows, _ = _children_rows(node.children, depth)
        return Block(tuple(_tint(row.prefixed(QUOTE_BAR, QUOTE_BAR)) for row in rows), 1, 1, kind)
    if kind == "hr":
        return Block((Row(rule=True),), 1, 1, kind)
    if kind == "table":
        return Block((Row(table=_table(node)),), 0, 1, kind)
    if kind == "html_block":
        lines = node.content.rstrip("\n").split("\n")
        return Block(tuple(Row(Content(line)) for line in lines), 0, 1, kind)
    # Anything a plugin might add: its text, plainly.
    text = node.content or "".join(child.content for child in node.children)
    return Block((Row(Content(text)),), 0, 1, kind)


def _tint(row: Row) -> Row:
    if row.table is not None or row.code or row.rule:
        return row
    return replace(row, body=row.body.stylize_before(QUOTE))


def _children_rows(children: Sequence[SyntaxTreeNode], depth: int) -> tuple[list[Row], int]:
    """Rows of the blocks inside a quote or a list item, spaced as top-level blocks are
    (a tight list's paragraphs want no blank lines; a nested list hugs its item's text),
    and the blank lines the last of them wants below it."""
    rows: list[Row] = []
    previous: Block | None = None
    for child in children:
        block = render_block(child, depth)
        if block.kind in ("bullet_list", "ordered_list"):
            block = replace(block, bottom=0)
        if previous is not None:
            rows.extend(Row() for _ in range(max(previous.bottom, block.top)))
        rows.extend(block.rows)
        previous = block
    return rows, previous.bottom if previous is not None else 0


def _list_rows(node: SyntaxTreeNode, depth: int) -> list[Row]:
    items = node.children
    if node.type == "ordered_list":
        start = int(node.attrs.get("start", 1) or 1)
        markers = [f"{number}. " for number in range(start, start + len(items))]
        size = max((len(marker) for marker in markers), default=0)
        markers = [marker.rjust(size) for marker in markers]
        inner = depth
    else:
        markers = [BULLETS[depth % len(BULLETS)]] * len(items)
        inner = depth + 1
    loose = any(
        not child.hidden for item in items for child in item.children if child.type == "paragraph"
    )
    rows: list[Row] = []
    below = 0
    for index, (item, marker) in enumerate(zip(items, markers, strict=True)):
        # Even in a tight list, an item that ends with a code block (a quote, a table...)
        # keeps the blank line after it that it has above it.
        if index and (loose or below):
            rows.append(Row())
        bullet = Content.styled(marker, BULLET_STYLE)
        indent = Content(" " * len(marker))
        item_rows, below = _children_rows(item.children, inner)
        item_rows = item_rows or [Row()]
        for number, row in enumerate(item_rows):
            rows.append(row.prefixed(bullet if number == 0 else indent, indent))
    return rows


def _code_rows(code: str, language: str) -> tuple[Row, ...]:
    highlighted = highlight_code(code.rstrip("\n"), language)
    return tuple(Row(line, code=True) for line in highlighted.split("\n", allow_blank=True))


def _table(node: SyntaxTreeNode) -> Table:
    header: list[Content] = []
    rows: list[tuple[Content, ...]] = []
    aligns: list[str] = []
    for section in node.children:
        for tr in section.children:
            cells = [_inline_content(cell) for cell in tr.children]
            if section.type == "thead":
                header = [cell.stylize_before(TABLE_HEADER) for cell in cells]
                for cell in tr.children:
                    match = _ALIGN.search(str(cell.attrs.get("style", "")))
                    aligns.append(match.group(1) if match else "left")
            else:
                rows.append(tuple(cells))
    return Table(tuple(header), tuple(rows), tuple(aligns))


# --- inline ---------------------------------------------------------------------------------


def _inline_content(node: SyntaxTreeNode) -> Content:
    builder = _InlineBuilder()
    for child in node.children:
        if child.type == "inline":
            builder.walk(child.children)
    return builder.content()


class _InlineBuilder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[Span | None] = []
        self.position = 0

    def content(self) -> Content:
        spans = [span for span in self.spans if span is not None and span.end > span.start]
        return Content("".join(self.parts), spans)

    def text(self, text: str, style: str | Style | None = None) -> None:
        if not text:
            return
        if style:
            self.spans.append(Span(self.position, self.position + len(text), style))
        self.parts.append(text)
        self.position += len(text)

    def styled(self, children: Iterable[SyntaxTreeNode], *styles: str | Style) -> None:
        # Reserve the outer spans' places first: later spans win, so inner styles (a code
        # span inside a link) stay on top.
        first = len(self.spans)
        self.spans.extend(None for _ in styles)
        start = self.position
        self.walk(children)
        for offset, style in enumerate(styles):
            self.spans[first + offset] = Span(start, self.position, style)

    def walk(self, nodes: Iterable[SyntaxTreeNode]) -> None:
        for node in nodes:
            kind = node.type
            if kind == "text":
                self.text(_WHITESPACE.sub(" ", node.content))
            elif kind == "softbreak":
                self.text(" ")
            elif kind == "hardbreak":
                self.text("\n")
            elif kind == "code_inline":
                self.text(node.content, CODE_INLINE)
            elif kind in INLINE_STYLES:
                self.styled(node.children, INLINE_STYLES[kind])
            elif kind == "link":
                href = str(node.attrs.get("href", ""))
                self.styled(node.children, LINK, *_link_style(href))
            elif kind == "image":
                source = str(node.attrs.get("src", ""))
                alt = "".join(child.content for child in node.children) or "image"
                start = self.position
                self.text(f"[{alt}]")
                self.spans.append(Span(start, self.position, LINK))
                self.spans.extend(Span(start, self.position, s) for s in _link_style(source))
            elif node.children:
                self.walk(node.children)
            else:
                self.text(node.content)


def _link_style(href: str) -> list[Style]:
    """The URL as a terminal hyperlink, and a click on it calls the widget's ``link``
    action (``MarkdownView.action_link``)."""
    if not href:
        return []
    return [Style(link=href) + Style.from_meta({"@click": f"link({href!r})"})]


# --- code -----------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer:
    try:
        return get_lexer_by_name(language or "text", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return get_lexer_by_name("text", stripnl=False, ensurenl=False)


def highlight_code(code: str, language: str) -> Content:
    """``code`` with the theme's syntax colours. Without a language nothing is guessed:
    guessing would run every lexer on each streamed update of an unlabelled block."""
    code = code.expandtabs(TAB_SIZE)
    spans: list[Span] = []
    position = 0
    for token_type, token in _lexer(language.lower()).get_tokens(code):
        end = position + len(token)
        kind: Any = token_type
        while kind is not None:
            if style := SYNTAX_STYLES.get(kind):
                spans.append(Span(position, end, style))
                break
            kind = kind.parent
        position = end
    return Content(code, spans)
