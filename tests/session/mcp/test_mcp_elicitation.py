"""A server's request for input (elicitation): the form's fields, answers, declines, and a
call that waits on the person without timing out. A real stdio server asks (``book``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from picode.ai.providers.faux import text_turn
from picode.ai.types import ToolResultMessage
from picode.session.events import Notice
from picode.session.mcp.connection import McpConnection
from picode.session.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    ElicitField,
    SchemaError,
    convert,
    fields,
)
from tests.session.conftest import SessionHarness, run
from tests.session.mcp.conftest import recorded, settings_with, stdio_server
from tests.session.mcp.test_mcp_session import call


class FakeForm:
    """Answers each request with what it was given, after ``delay`` seconds if any."""

    def __init__(self, answer: ElicitationAnswer, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.requests: list[ElicitationRequest] = []

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.requests.append(request)
        if self.delay:
            # The person takes longer than the server's timeout_s to fill the form in.
            await asyncio.sleep(self.delay)
        return self.answer


def _result(session: object) -> ToolResultMessage:
    messages = [m for m in session.messages if isinstance(m, ToolResultMessage)]  # type: ignore[attr-defined]
    return messages[-1]


def _book(harness: SessionHarness, record: Path, form: FakeForm | None, **config: object) -> str:
    async def scenario() -> str:
        faux = harness.faux(call("book"), text_turn("done"))
        session = await harness.open(
            faux, settings=settings_with(files=stdio_server(record, **config))
        )
        notices: list[Notice] = []
        session.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)
        if form is not None:
            session.set_elicitor(form)
        await session.wait_for_mcp()
        await session.prompt("book a table")
        text = _result(session).text
        await session.close()
        return text + "".join(f"\nnotice: {n.text}" for n in notices)

    return run(scenario(), timeout=60)


def test_an_accepted_form_reaches_the_server(harness: SessionHarness, record: Path) -> None:
    answer = ElicitationAnswer(
        "accept", {"name": "Ada", "guests": 3, "vegan": True, "table": "terrace"}
    )
    form = FakeForm(answer)
    text = _book(harness, record, form)
    assert text.startswith("booked: Ada, 3, vegan=True, terrace")
    [request] = form.requests
    assert request.server == "files"
    assert request.message == "Book a table at \x1b[2JChez MCP?"
    kinds = [(f.name, f.kind, f.required) for f in request.fields]
    assert kinds == [
        ("name", "string", True),
        ("guests", "integer", True),
        ("vegan", "boolean", False),
        ("table", "enum", False),
    ]
    name, guests, _, table = request.fields
    assert name.title == "Your \x1b[31mname" and name.min_length == 2
    assert (guests.minimum, guests.maximum) == (1, 10)
    assert table.choices == ("inside", "terrace") and table.default == "inside"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_form(harness: SessionHarness, record: Path, action: str) -> None:
    text = _book(harness, record, FakeForm(ElicitationAnswer(action)))  # type: ignore[arg-type]
    assert text.startswith(f"not booked: {action}")
    assert f"book {action}" in recorded(record)


def test_without_a_form_the_request_is_declined_with_a_notice(
    harness: SessionHarness, record: Path
) -> None:
    text = _book(harness, record, None)
    assert text.startswith("not booked: decline")
    assert "notice: MCP server 'files' asked for input and was declined" in text


def test_the_call_does_not_time_out_while_the_person_answers(record: Path, tmp_path: Path) -> None:
    form = FakeForm(ElicitationAnswer("accept", {"name": "Bo", "guests": 1}), delay=2.5)

    async def scenario() -> str:
        connection = McpConnection(
            "files", stdio_server(record), tmp_path, lambda: None, None, form
        )
        connection.start()
        await asyncio.wait_for(connection.wait_settled(), 60)
        assert connection.state == "ready", connection.error
        # Connected: now the person takes longer than a call may.
        connection.config = connection.config.model_copy(update={"timeout_s": 1.0})
        try:
            result = await connection.call("book", {})
        finally:
            await connection.stop()
        return "".join(getattr(block, "text", "") for block in result.content)

    assert run(scenario(), timeout=60) == "booked: Bo, 1, vegan=False, inside"


def test_fields_read_every_primitive_and_refuse_the_rest() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mail": {"type": "string", "format": "email"},
            "size": {"type": "number", "minimum": 0.5},
            "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
            "old": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        },
        "required": ["mail"],
    }
    mail, size, color, old = fields(schema)
    assert (mail.kind, mail.format, mail.required) == ("string", "email", True)
    assert (size.kind, size.minimum) == ("number", 0.5)
    assert (color.kind, color.choices, color.choice_titles) == ("enum", ("r",), ("Red",))
    assert old.choice_titles == ("A", "B")
    with pytest.raises(SchemaError, match="'nested'"):
        fields({"properties": {"nested": {"type": "object"}}})


@pytest.mark.parametrize(
    ("item", "text", "expected"),
    [
        (ElicitField("n", "integer", "N", minimum=1, maximum=10), "3", 3),
        (ElicitField("n", "integer", "N", minimum=1, maximum=10), "11", "at most 10"),
        (ElicitField("n", "integer", "N"), "2.5", "a whole number"),
        (ElicitField("x", "number", "X"), "2.5", 2.5),
        (ElicitField("x", "number", "X"), "nan", "a number"),
        (ElicitField("s", "string", "S", required=True), " ", "required"),
        (ElicitField("s", "string", "S"), "", None),
        (ElicitField("s", "string", "S", min_length=3), "ab", "at least 3 characters"),
        (ElicitField("m", "string", "M", format="email"), "a@b", "must be an email address"),
        (ElicitField("m", "string", "M", format="email"), "a@b.org", "a@b.org"),
        (ElicitField("d", "string", "D", format="date"), "2026-12-05", "2026-12-05"),
        (ElicitField("e", "enum", "E", choices=("a",)), "b", "choose one"),
    ],
)
def test_convert_checks_what_was_typed(item: ElicitField, text: str, expected: object) -> None:
    if isinstance(expected, str) and expected != text and not expected.startswith(("a@", "20")):
        with pytest.raises(ValueError, match=expected):
            convert(item, text)
    else:
        assert convert(item, text) == expected
