"""One tool call: visible from the first streamed byte, then running, then its result."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from picode.agent.tool import ToolResult
from picode.tui.widgets import tool_render
from picode.tui.widgets.tool_render import ToolState


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
        #: Folded away: the drawn body is dropped, and updates wait for ``bring_back``.
        self.folded = False
        self.set_reactive(ToolCallView.expanded, expanded)

    def compose(self) -> ComposeResult:
        self._header = Static(self._header_content(), classes="tool-header")
        body = self._body_content()
        self._body = Static(body or "", classes="tool-body" + ("" if body else " -empty"))
        yield self._header
        yield self._body

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
        body = self._body_content()
        return body.plain if body is not None else ""

    def _header_content(self) -> Content:
        return tool_render.header(self.tool_name, self.args, self.state)

    def _body_content(self) -> Content | None:
        if self.tool_name == "task":
            body = self._subagent_body()
            if body is not None:
                return body
        if self.result is not None:
            return tool_render.result_body(
                self.tool_name, self.args, self.result, self.state == "error", self.expanded
            )
        if self.state == "running":
            return tool_render.running_body(self.tool_name, self.partial)
        return None

    def _subagent_body(self) -> Content | None:
        """A subagent's block (``subagent_render``), when the call carries one's state."""
        from picode.session.subagents import subagent_state
        from picode.tui.widgets.subagent_render import subagent_body

        # An aborted call's result is the loop's own: the last partial still says who ran.
        state = next(
            (
                found
                for shown in (self.result, self.partial)
                if shown is not None and (found := subagent_state(shown.details)) is not None
            ),
            None,
        )
        if state is None:
            return None
        return subagent_body(state, self.result, self.state == "error", self.expanded)

    def _refresh_header(self) -> None:
        if self._header is not None and not self.folded:
            self._header.update(self._header_content())

    def _refresh_body(self) -> None:
        if self._body is None or self.folded:
            return
        body = self._body_content()
        self._body.set_class(body is None, "-empty")
        self._body.update(body or "")
