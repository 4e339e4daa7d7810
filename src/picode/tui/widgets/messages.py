"""Transcript entries: user messages, assistant messages (thinking, text, tool calls), notices.

Widgets only display what they are told; the event router decides what to tell them.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from picode.agent.file_blocks import Attached, split_attachments
from picode.ai.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from picode.ai.untrusted import safe
from picode.tui.widgets.markdown import MarkdownView, StreamingMarkdown
from picode.tui.widgets.steady import KeepsDrawnLines
from picode.tui.widgets.tool_call import ToolCallView

#: A pasted megabyte stays in the session; the transcript shows its beginning.
USER_MESSAGE_MAX_LINES = 40
USER_MESSAGE_MAX_CHARS = 8_000


class UserMessageView(Static):
    DEFAULT_CSS = """
    UserMessageView {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        background: $user-message-background;
        color: $foreground;
    }
    """

    def __init__(self, text: str, attached: Sequence[Attached] = ()) -> None:
        self.text = text
        self.attached = list(attached)
        super().__init__(_user_content(text, self.attached))

    @classmethod
    def of(cls, message: UserMessage) -> UserMessageView:
        """The typed text, and a line per ``@path`` file sent with it (not its content)."""
        return cls(*split_attachments(message))


def _user_content(text: str, attached: Sequence[Attached]) -> Content:
    shown = safe(text[:USER_MESSAGE_MAX_CHARS])
    lines = shown.splitlines()
    hidden_lines = text.count("\n") + 1 - min(len(lines), USER_MESSAGE_MAX_LINES)
    shown = "\n".join(lines[:USER_MESSAGE_MAX_LINES])
    body = Content.assemble(("› ", "bold $primary"), shown)
    if hidden_lines > 0 or len(text) > USER_MESSAGE_MAX_CHARS:
        more = f"\n… {max(hidden_lines, 0)} more lines, {len(text):,} characters in all"
        body = body + Content.styled(more, "$muted italic")
    for file in attached:
        body = body + Content.styled(f"\n  {file.describe()}", "$muted")
    return body


class ThinkingView(Widget):
    """Dim while it streams; collapses to one line (Ctrl+T toggles every block)."""

    DEFAULT_CSS = """
    ThinkingView {
        height: auto;
        margin: 0 0 1 0;
        color: $thinking;
        text-style: italic;
    }
    """

    collapsed: reactive[bool] = reactive(False, layout=True, init=False)

    def __init__(self, text: str = "", *, collapsed: bool = False) -> None:
        super().__init__()
        text = safe(text)
        self._parts: list[str] = [text] if text else []
        self._text: str | None = text
        self.set_reactive(ThinkingView.collapsed, collapsed)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
        return self._text

    def feed(self, delta: str) -> None:
        if delta:
            self._parts.append(safe(delta))
            self._text = None
            self.refresh(layout=True)

    def set_text(self, text: str) -> None:
        text = safe(text)
        self._parts = [text]
        self._text = text
        self.refresh(layout=True)

    def render(self) -> Content:
        if self.collapsed:
            return Content.styled("∴ Thinking (ctrl+t to show)", "$thinking")
        return Content.assemble(("∴ Thinking\n", "$thinking not italic"), self.text.strip("\n"))


class AssistantMessageView(KeepsDrawnLines):
    """One assistant message; blocks are mounted in content order as they start."""

    DEFAULT_CSS = """
    AssistantMessageView {
        height: auto;
        layout: vertical;
        background: $assistant-background;
    }
    AssistantMessageView > .error {
        margin: 0 0 1 0;
        color: $tool-error;
    }
    AssistantMessageView > .incomplete {
        margin: 0 0 1 0;
    }
    /* Not inherited: each block draws its own lines, so each is dimmed. */
    AssistantMessageView.-superseded > * {
        text-opacity: 60%;
    }
    """

    def __init__(
        self, *children: Widget, thinking_collapsed: bool = False, tools_expanded: bool = False
    ) -> None:
        super().__init__(*children)
        self.thinking_collapsed = thinking_collapsed
        self.tools_expanded = tools_expanded
        self.blocks: dict[int, Widget] = {}
        self.finished = False

    # --- streaming ------------------------------------------------------------------------

    def text_start(self, index: int) -> StreamingMarkdown:
        block = self.blocks.get(index)
        if isinstance(block, StreamingMarkdown):
            return block
        block = StreamingMarkdown()
        self._add(index, block)
        return block

    def text_delta(self, index: int, delta: str) -> None:
        self.text_start(index).feed(delta)

    def text_end(self, index: int, content: str) -> None:
        block = self.text_start(index)
        # A block that missed deltas (joined late) catches up from the final content.
        if block.text_length < len(content):
            block.feed(content[block.text_length :])
        block.finish()
        block.share_source(content)

    def thinking_start(self, index: int) -> ThinkingView:
        block = self.blocks.get(index)
        if isinstance(block, ThinkingView):
            return block
        block = ThinkingView(collapsed=self.thinking_collapsed)
        self._add(index, block)
        return block

    def thinking_delta(self, index: int, delta: str) -> None:
        self.thinking_start(index).feed(delta)

    def thinking_end(self, index: int, content: str) -> None:
        block = self.thinking_start(index)
        if block.text != content:
            block.set_text(content)

    def tool_call_start(self, index: int, call: ToolCall) -> ToolCallView:
        block = self.blocks.get(index)
        if isinstance(block, ToolCallView):
            return block
        block = ToolCallView(call.id, call.name, call.arguments, expanded=self.tools_expanded)
        self._add(index, block)
        return block

    def tool_call_update(self, index: int, call: ToolCall) -> ToolCallView:
        block = self.tool_call_start(index, call)
        block.update_arguments(call.arguments)
        return block

    def finish(self, message: AssistantMessage) -> None:
        """The message is complete: settle every block and show a failure, if any."""
        if self.finished:
            return
        self.finished = True
        for index, block in enumerate(message.content):
            match block:
                case TextContent(text=text) if text:
                    self.text_end(index, text)
                case ThinkingContent(thinking=thinking) if thinking:
                    self.thinking_end(index, thinking)
                case ToolCall():
                    self.tool_call_update(index, block)
        for widget in self.blocks.values():
            if isinstance(widget, StreamingMarkdown):
                widget.finish()
        if message.stop_reason == "error":
            self.mount(_error_line(message))

    def drop_error_line(self) -> bool:
        """Take the error line away (a retry's notice says it now); True when the reply
        still shows something (the partial text of a cut stream)."""
        for line in self.query_children(".error"):
            line.remove()
        return bool(self.blocks)

    def supersede(self) -> None:
        """A failed attempt whose partial reply stays above its retry: dimmed and marked."""
        self.add_class("-superseded")
        if not self.query_children(".incomplete"):
            self.mount(_incomplete_line())

    def tool_views(self) -> list[ToolCallView]:
        return [block for block in self.blocks.values() if isinstance(block, ToolCallView)]

    def set_thinking_collapsed(self, collapsed: bool) -> None:
        self.thinking_collapsed = collapsed
        for block in self.blocks.values():
            if isinstance(block, ThinkingView):
                block.collapsed = collapsed

    def set_tools_expanded(self, expanded: bool) -> None:
        self.tools_expanded = expanded
        for block in self.tool_views():
            block.expanded = expanded

    def _add(self, index: int, block: Widget) -> None:
        self.blocks[index] = block
        later = [i for i in self.blocks if i > index]
        if later:
            self.mount(block, before=self.blocks[min(later)])
        else:
            self.mount(block)


def completed_assistant_view(
    message: AssistantMessage,
    *,
    thinking_collapsed: bool,
    tools_expanded: bool,
    superseded: bool = False,
) -> AssistantMessageView:
    """A finished message from history (a resumed session): no streaming machinery.
    ``superseded``: a retried attempt, whose failure its retry's line tells."""
    blocks: dict[int, Widget] = {}
    for index, block in enumerate(message.content):
        match block:
            case TextContent(text=text) if text.strip():
                blocks[index] = MarkdownView(text)
            case ThinkingContent(thinking=thinking) if thinking.strip():
                blocks[index] = ThinkingView(thinking, collapsed=thinking_collapsed)
            case ToolCall(id=call_id, name=name, arguments=arguments):
                blocks[index] = ToolCallView(call_id, name, arguments, expanded=tools_expanded)
    children = list(blocks.values())
    if superseded:
        children.append(_incomplete_line())
    elif message.stop_reason == "error":
        children.append(_error_line(message))
    view = AssistantMessageView(
        *children, thinking_collapsed=thinking_collapsed, tools_expanded=tools_expanded
    )
    if superseded:
        view.add_class("-superseded")
    view.blocks = blocks
    view.finished = True
    return view


def _error_line(message: AssistantMessage) -> Static:
    text = safe(message.error_message or "The request failed.")
    return Static(Content.styled(f"Error: {text}", "$tool-error"), classes="error")


def _incomplete_line() -> Static:
    return Static(Content.styled("(incomplete)", "$muted italic"), classes="incomplete")
