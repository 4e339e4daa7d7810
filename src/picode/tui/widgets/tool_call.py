"""One tool call: visible from the first streamed byte, then running, then its result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from picode.agent.tool import ToolResult
from picode.tui.widgets import tool_render
from picode.tui.widgets.tool_render import MarkdownPart, ToolState

if TYPE_CHECKING:
    from picode.tui.widgets.markdown import MarkdownView


class ToolCallView(Widget):
    """State lives in attributes so updates that arrive before mounting are not lost, and a
    view folded out of view (``fold_away``) keeps only them: the call and its result, from
    which ``bring_back`` draws it again."""

    DEFAULT_CSS = """
    ToolCallView {
        height: auto;
        layout: vertical;
        margin: 0 0 1 0;
        padding: 0 1;
        background: $tool-background;
    }
    ToolCallView > .tool-header {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    ToolCallView > .tool-body {
        height: auto;
        padding: 0 0 0 2;
    }
    ToolCallView > .tool-body.-empty {
        display: none;
    }
    ToolCallView > .tool-markdown {
        margin: 0;
        padding: 0 0 0 2;
    }
    ToolCallView > .tool-note {
        height: auto;
        padding: 0 0 0 2;
    }
    ToolCallView > .tool-note.-empty {
        display: none;
    }
    """

    expanded: reactive[bool] = reactive(False, init=False)

    def __init__(
        self, call_id: str, name: str, args: dict[str, Any] | None = None, *, expanded: bool = False
    ) -> None:
        super().__init__()
        self.call_id = call_id
        self.tool_name = name
        self.args: dict[str, Any] = dict(args or {})
        self.state: ToolState = "streaming"
        self.partial: ToolResult | None = None
        self.result: ToolResult | None = None
        self._header: Static | None = None
        self._body: Static | None = None
        #: Model-written Markdown after the body (``tool_render.MarkdownPart``), and the note
        #: of lines left out after it: mounted only for a call that has some.
        self._markdown: MarkdownView | None = None
        self._note: Static | None = None
        #: Folded away: the drawn body is dropped, and updates wait for ``bring_back``.
        self.folded = False
        self.set_reactive(ToolCallView.expanded, expanded)

    def compose(self) -> ComposeResult:
        self._header = Static(self._header_content(), classes="tool-header")
        body = self._body_content()
        self._body = Static(body or "", classes="tool-body" + ("" if body else " -empty"))
        yield self._header
        yield self._body
        part = self._markdown_part()
        if part is not None:
            yield from self._markdown_widgets(part)

    # --- updates from the event router --------------------------------------------------

    def update_arguments(self, args: dict[str, Any]) -> None:
        """Streamed arguments so far (the partial's dict is refreshed at each flush)."""
        before = tool_render.key_argument(self.tool_name, self.args)
        self.args = dict(args)
        if tool_render.key_argument(self.tool_name, self.args) != before:
            self._refresh_header()

    def set_running(self, args: dict[str, Any] | None = None) -> None:
        if args is not None:
            self.args = dict(args)
        if self.state == "streaming":
            self.state = "running"
        self._refresh_header()

    def set_awaiting(self, awaiting: bool) -> None:
        """The call waits for the person's approval (True) or has it now (False)."""
        if self.state in ("running", "awaiting"):
            self.state = "awaiting" if awaiting else "running"
            self._refresh_header()

    def set_partial(self, partial: ToolResult) -> None:
        self.partial = partial
        self._refresh_body()

    def set_result(self, result: ToolResult, is_error: bool) -> None:
        self.result = result
        if self.tool_name != "task":
            # The output so far, often as long as the result: only a subagent's is read again.
            self.partial = None
        self.state = "error" if is_error else "success"
        self._refresh_header()
        self._refresh_body()

    def watch_expanded(self) -> None:
        self._refresh_body()

    # --- folding (``Transcript``) -----------------------------------------------------------

    def fold_away(self) -> None:
        """Out of view for good: drop the drawn body (its ``Content``: up to
        ``tool_render.EXPANDED_LINES`` lines of styled output or diff; the transcript drops
        the lines Textual drew from it) and keep the call and its result, which draw it
        again."""
        if self.folded or self._body is None:
            return
        self.folded = True
        self._body.update("", layout=False)

    def bring_back(self) -> None:
        """Shown again: draw the header and body from the state, as they were."""
        if not self.folded:
            return
        self.folded = False
        self._refresh_header()
        self._refresh_body()

    # --- rendering ------------------------------------------------------------------------

    @property
    def is_finished(self) -> bool:
        return self.state in ("success", "error")

    @property
    def header_text(self) -> str:
        return self._header_content().plain

    @property
    def body_text(self) -> str:
        """The body as text: its lines, then any Markdown (as written) and its note."""
        body = self._body_content()
        texts = [body.plain] if body is not None else []
        part = self._markdown_part()
        if part is not None:
            texts.append(part.source)
            if part.note is not None:
                texts.append(part.note.plain)
        return "\n".join(texts)

    def _header_content(self) -> Content:
        return tool_render.header(self.tool_name, self.args, self.state)

    def _body_content(self) -> Content | None:
        state = self._subagent_state()
        if state is not None:
            from picode.tui.widgets.subagent_render import subagent_body

            return subagent_body(state, self.result, self.state == "error", self.expanded)
        if self.result is not None:
            return tool_render.result_body(
                self.tool_name, self.args, self.result, self.state == "error", self.expanded
            )
        if self.state == "running":
            return tool_render.running_body(self.tool_name, self.partial)
        return None

    def _markdown_part(self) -> MarkdownPart | None:
        if self.result is None:
            return None
        is_error = self.state == "error"
        if self._subagent_state() is not None:
            from picode.tui.widgets.subagent_render import subagent_answer

            return subagent_answer(self.result, is_error, self.expanded)
        return tool_render.result_markdown(
            self.tool_name, self.args, self.result, is_error, self.expanded
        )

    def _subagent_state(self) -> dict[str, Any] | None:
        """A ``task`` call's subagent state (``subagent_render`` draws it), if it has one."""
        if self.tool_name != "task":
            return None
        from picode.session.subagents import subagent_state

        # An aborted call's result is the loop's own: the last partial still says who ran.
        return next(
            (
                found
                for shown in (self.result, self.partial)
                if shown is not None and (found := subagent_state(shown.details)) is not None
            ),
            None,
        )

    def _markdown_widgets(self, part: MarkdownPart) -> tuple[MarkdownView, Static]:
        # Imported here: most calls have no Markdown, and the view is not on the first
        # frame's path.
        from picode.tui.widgets.markdown import MarkdownView

        self._markdown = MarkdownView(part.source, classes="tool-markdown")
        self._note = Static(part.note or "", classes="tool-note")
        self._note.set_class(part.note is None, "-empty")
        return self._markdown, self._note

    def _show_markdown(self, part: MarkdownPart | None) -> None:
        if part is None:
            for widget in (self._markdown, self._note):
                if widget is not None:
                    widget.remove()
            self._markdown = self._note = None
        elif self._markdown is None or self._note is None:
            self.mount(*self._markdown_widgets(part))
        else:
            self._markdown.update(part.source)
            self._note.update(part.note or "")
            self._note.set_class(part.note is None, "-empty")

    def _refresh_header(self) -> None:
        if self._header is not None and not self.folded:
            self._header.update(self._header_content())

    def _refresh_body(self) -> None:
        if self._body is None or self.folded:
            return
        body = self._body_content()
        self._body.set_class(body is None, "-empty")
        self._body.update(body or "")
        self._show_markdown(self._markdown_part())
