"""Markdown for assistant text: theme-coloured code fences and a streaming feed.

``feed`` is synchronous (the event router must stay cheap); fragments are buffered and
handed to Textual's ``MarkdownStream`` from this widget's own message queue, which keeps
their order and works even before the widget is mounted.
"""

from __future__ import annotations

from pygments.token import Token
from textual.content import Content
from textual.highlight import HighlightTheme, highlight
from textual.message import Message
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence, MarkdownStream


class PicodeHighlightTheme(HighlightTheme):
    """Syntax colours from the theme's ``syntax-*`` tokens."""

    STYLES: dict[tuple[str, ...], str] = {  # noqa: RUF012 - Textual's own convention
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


class PicodeFence(MarkdownFence):
    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        # Without a language, guessing would run the lexer guesser on every streamed update.
        return highlight(code, language=language or "text", theme=PicodeHighlightTheme)


class PicodeMarkdown(Markdown):
    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012 - Textual's own convention
        **Markdown.BLOCKS,
        "fence": PicodeFence,
        "code_block": PicodeFence,
    }

    DEFAULT_CSS = """
    /* Transcript entries are spaced by their bottom margins; Markdown's blocks bring theirs. */
    PicodeMarkdown {
        padding: 0;
        margin: 0;
        background: transparent;
    }
    PicodeMarkdown MarkdownH1, PicodeMarkdown MarkdownH2, PicodeMarkdown MarkdownH3 {
        color: $md-heading;
    }
    PicodeMarkdown MarkdownBlockQuote {
        color: $md-quote;
    }
    PicodeMarkdown MarkdownFence {
        margin: 1 0;
        & > Label {
            padding: 0 1;
        }
    }

    """


class FlushMarkdown(Message, bubble=False):
    def __init__(self, final: bool = False) -> None:
        super().__init__()
        self.final = final


class StreamingMarkdown(PicodeMarkdown):
    """A Markdown document that grows by fragments while an answer streams."""

    def __init__(self, markdown: str | None = None, **kwargs: object) -> None:
        super().__init__(markdown, **kwargs)  # type: ignore[arg-type]
        self._buffer: list[str] = []
        self._flush_posted = False
        self._stream: MarkdownStream | None = None
        self._finished = False
        self.text_length = len(markdown or "")

    def feed(self, fragment: str) -> None:
        if not fragment or self._finished:
            return
        self._buffer.append(fragment)
        self.text_length += len(fragment)
        if not self._flush_posted:
            self._flush_posted = True
            self.post_message(FlushMarkdown())

    def finish(self) -> None:
        """No more fragments: let the stream drain and stop."""
        if not self._finished:
            self._finished = True
            self.post_message(FlushMarkdown(final=True))

    async def _on_flush_markdown(self, message: FlushMarkdown) -> None:
        self._flush_posted = False
        if self._buffer:
            fragment = "".join(self._buffer)
            self._buffer.clear()
            if self._stream is None:
                self._stream = Markdown.get_stream(self)
            await self._stream.write(fragment)
        if message.final and self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()
