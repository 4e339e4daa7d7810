"""A server's request for input (MCP elicitation) as a form over the app.

Everything the server wrote (its message, the fields' titles, descriptions and choices) is
untrusted: shown with control characters spelled out, never as markup. Each field is
checked as it would be sent (``convert``); Accept sends only a form without errors.
Decline says no; Esc (Cancel) dismisses without an answer. One form at a time.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Select, Static

from picode.ai.untrusted import one_line, visible
from picode.session.mcp import (
    ElicitationAnswer,
    ElicitationRequest,
    ElicitField,
    Value,
    convert,
)

if TYPE_CHECKING:
    from textual.app import App

#: Characters of one line of the server's words.
WIDTH = 100
HINT = "tab next field · ctrl+s accept · esc cancel"


class ElicitationScreen(ModalScreen[ElicitationAnswer]):
    DEFAULT_CSS = """
    ElicitationScreen {
        align: center middle;
    }
    ElicitationScreen > #elicit {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 90%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    ElicitationScreen #elicit-title {
        text-style: bold;
    }
    ElicitationScreen #elicit-message {
        margin-bottom: 1;
    }
    ElicitationScreen #elicit-fields {
        height: auto;
        max-height: 60vh;
    }
    ElicitationScreen .elicit-label {
        margin-top: 1;
    }
    ElicitationScreen .elicit-note {
        color: $text-muted;
    }
    ElicitationScreen .elicit-error {
        color: $error;
        height: auto;
    }
    ElicitationScreen #elicit-buttons {
        height: auto;
        margin-top: 1;
    }
    ElicitationScreen #elicit-buttons Button {
        margin-right: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer('cancel')", "Cancel", show=False),
        Binding("ctrl+s", "accept", "Accept", show=False),
    ]

    def __init__(self, request: ElicitationRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="elicit"):
            server = one_line(request.server, 40)
            yield Static(f"MCP server '{server}' asks:", id="elicit-title", markup=False)
            yield Static(visible(request.message[:2000]), id="elicit-message", markup=False)
            with VerticalScroll(id="elicit-fields"):
                for index, item in enumerate(request.fields):
                    yield from self._field(index, item)
            with Horizontal(id="elicit-buttons"):
                yield Button("Accept", id="elicit-accept", variant="primary")
                yield Button("Decline", id="elicit-decline")
                yield Button("Cancel", id="elicit-cancel")
            yield Static(HINT, classes="elicit-note", id="elicit-hint", markup=False)

    def _field(self, index: int, item: ElicitField) -> ComposeResult:
        label = one_line(item.title, WIDTH) + (" *" if item.required else "")
        if item.kind == "boolean":
            yield Checkbox(label, value=bool(item.default), id=f"elicit-{index}")
        else:
            yield Static(label, classes="elicit-label", markup=False)
        if item.description:
            yield Static(one_line(item.description, WIDTH), classes="elicit-note", markup=False)
        if item.kind == "enum":
            options = [
                (one_line(title, WIDTH), value)
                for title, value in zip(item.choice_titles, item.choices, strict=True)
            ]
            default = item.default if item.default in item.choices else Select.NULL
            yield Select(options, value=default, id=f"elicit-{index}", allow_blank=True)
        elif item.kind != "boolean":
            default = "" if item.default is None else str(item.default)
            yield Input(value=default, id=f"elicit-{index}", placeholder=_hint(item))
        yield Static("", classes="elicit-error", id=f"elicit-error-{index}", markup=False)

    def on_mount(self) -> None:
        if self.request.fields:
            self.query_one("#elicit-0").focus()
        else:
            self.query_one("#elicit-accept").focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """The hint names the field being filled in (the cursor alone is easy to lose)."""
        widget_id = event.widget.id or ""
        index = widget_id.removeprefix("elicit-")
        hint = self.query_one("#elicit-hint", Static)
        if index.isdigit() and int(index) < len(self.request.fields):
            title = one_line(self.request.fields[int(index)].title, 40)
            hint.update(f"› {title} · {HINT}")
        else:
            hint.update(HINT)

    def content(self) -> dict[str, Value] | None:
        """The form's values; None (and the errors shown) when one is wrong."""
        values: dict[str, Value] = {}
        ok = True
        for index, item in enumerate(self.request.fields):
            error = self.query_one(f"#elicit-error-{index}", Static)
            widget = self.query_one(f"#elicit-{index}")
            try:
                value = self._value(item, widget)
            except ValueError as exc:
                error.update(str(exc))
                ok = False
                continue
            error.update("")
            if value is not None:
                values[item.name] = value
        return values if ok else None

    @staticmethod
    def _value(item: ElicitField, widget: Any) -> Value | None:
        if isinstance(widget, Checkbox):
            return bool(widget.value)
        if isinstance(widget, Select):
            chosen = widget.value
            if chosen is Select.NULL:
                if item.required:
                    raise ValueError("required")
                return None
            return convert(item, str(chosen))
        return convert(item, widget.value)

    def action_accept(self) -> None:
        content = self.content()
        if content is not None:
            self.dismiss(ElicitationAnswer("accept", content))

    def action_answer(self, action: str) -> None:
        self.dismiss(ElicitationAnswer("cancel" if action == "cancel" else "decline"))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "elicit-accept":
            self.action_accept()
        else:
            self.action_answer("decline" if event.button.id == "elicit-decline" else "cancel")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()


def _hint(item: ElicitField) -> str:
    if item.kind == "integer":
        return "a whole number"
    if item.kind == "number":
        return "a number"
    return item.format or ""


class Elicitations:
    """The session's elicitor in the app: one form at a time."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._turn: asyncio.Lock | None = None

    async def ask(self, request: ElicitationRequest) -> ElicitationAnswer:
        if self._turn is None:
            self._turn = asyncio.Lock()
        async with self._turn:
            answered: asyncio.Future[ElicitationAnswer] = asyncio.get_running_loop().create_future()

            def done(answer: ElicitationAnswer | None) -> None:
                if not answered.done():
                    answered.set_result(answer or ElicitationAnswer("cancel"))

            self._app.push_screen(ElicitationScreen(request), callback=done)
            return await answered
