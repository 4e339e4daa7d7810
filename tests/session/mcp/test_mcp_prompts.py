"""A server's prompts as slash commands and its resources as ``@server:uri`` attachments,
with a real stdio server (tests/session/mcp/server.py: prompt ``review``, resource
``notes://today``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.agent.file_blocks import split_attachments
from picode.ai.providers.faux import text_turn
from picode.ai.types import UserMessage
from picode.session.events import Notice
from picode.session.mcp import McpPrompt, McpPromptError
from picode.session.mcp.extras import prompt_arguments, resource_mentions
from picode.session.mcp.status import McpPromptArgument
from tests.session.conftest import SessionHarness, run
from tests.session.mcp.conftest import recorded, settings_with, stdio_server


def _users(session: object) -> list[UserMessage]:
    return [m for m in session.messages if isinstance(m, UserMessage)]  # type: ignore[attr-defined]


def test_a_server_prompt_runs_as_a_slash_command(harness: SessionHarness, record: Path) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("reviewed"))
        session = await harness.open(faux, settings=settings_with(files=stdio_server(record)))
        await session.wait_for_mcp()
        [prompt] = session.mcp_prompts()
        assert (prompt.command, prompt.description, prompt.usage) == (
            "mcp__files__review",
            "Review some code.",
            "<code> [focus]",
        )
        await session.prompt('/mcp__files__review "x = 1" style')
        [message] = _users(session)
        assert message.text == "Review this code for style:\nx = 1"
        assert "prompt review x = 1 style" in recorded(record)
        # A required argument left out: nothing is sent, the error says what is missing.
        with pytest.raises(McpPromptError, match="needs code"):
            await session.prompt("/mcp__files__review")
        assert len(_users(session)) == 1
        await session.close()

    run(scenario(), timeout=60)


def test_a_resource_is_attached_with_at_server_uri(harness: SessionHarness, record: Path) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("noted"), text_turn("ok"))
        session = await harness.open(faux, settings=settings_with(files=stdio_server(record)))
        notices: list[str] = []
        session.subscribe(lambda e: notices.append(e.text) if isinstance(e, Notice) else None)
        await session.wait_for_mcp()
        [resource] = session.mcp_resources()
        assert (resource.mention, resource.name) == ("@files:notes://today", "today")
        await session.prompt("what is on @files:notes://today?")
        [message] = _users(session)
        typed, attached = split_attachments(message)
        assert typed == "what is on @files:notes://today?"
        assert [a.describe() for a in attached] == ["attached: files:notes://today (2 lines)"]
        assert "\nbuy milk\ncall Ada\n" in "".join(getattr(b, "text", "") for b in message.content)
        # One the server does not have: said, and the message still goes.
        await session.prompt("and @files:notes://never")
        assert len(_users(session)) == 2
        assert any(n.startswith("@files:notes://never not attached") for n in notices)
        await session.close()

    run(scenario(), timeout=60)


def test_prompt_arguments_by_position_name_and_rest() -> None:
    prompt = McpPrompt(
        "mcp__s__p",
        "s",
        "p",
        arguments=(McpPromptArgument("a", required=True), McpPromptArgument("b")),
    )
    assert prompt_arguments(prompt, "one two three") == {"a": "one", "b": "two three"}
    assert prompt_arguments(prompt, "b=x a='y z'") == {"a": "y z", "b": "x"}
    assert prompt_arguments(prompt, '"q r"') == {"a": "q r"}
    with pytest.raises(ValueError, match="needs a"):
        prompt_arguments(prompt, "b=x")
    with pytest.raises(ValueError, match="takes no arguments"):
        prompt_arguments(McpPrompt("mcp__s__q", "s", "q"), "x")


def test_resource_mentions_name_known_servers_only() -> None:
    text = "see @files:notes://a, @other:x://b and me@files:notes://c or @files:notes://a"
    assert resource_mentions(text, ["files"]) == [("files", "notes://a")]
