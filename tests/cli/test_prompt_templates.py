"""Prompt templates in the real executable: ``-p "/name args"``, rpc and an editor (ACP)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cli.acp_client import FakeEditor, connect, new_session, point_at, prompt
from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

REVIEW = """---
description: Review a file
argument-hint: <file>
---
Review $1 for naming (all: $ARGUMENTS)."""


def add_review(picode: PicodeEnv) -> None:
    folder = picode.project / ".picode" / "prompts"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(REVIEW, encoding="utf-8")


def test_print_mode_sends_the_expanded_body(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(AnthropicDriver(), wire, picode)
    add_review(picode)
    broken = picode.home / "config" / "prompts" / "broken.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\ndescription: [unclosed\n---\nbody", encoding="utf-8")
    wire.enqueue(api.text("Looks fine."))

    result = picode.run("-p", "/review src/a.py", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Looks fine.\n"
    body = wire.requests[0].body.decode()
    assert "Review src/a.py for naming (all: src/a.py)." in body
    assert "/review" not in body
    assert result.stderr.count("broken.md") == 1  # one warning; the run went on


def test_rpc_lists_the_templates_and_expands_a_prompt(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(AnthropicDriver(), wire, picode)
    add_review(picode)
    wire.enqueue(api.text("Done."))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "get_commands", "id": "c"})
        listed = child.response("get_commands")["data"]["commands"]
        review = next(c for c in listed if c["name"] == "review")
        assert review["description"] == "Review a file"
        assert review["argument_hint"] == "<file>"
        assert review["source"] == "project"
        assert "init" in [c["name"] for c in listed]

        child.send({"type": "prompt", "id": "p", "message": "/review b.py"})
        assert child.response("prompt")["success"]
        child.event("agent_end")
        assert "Review b.py for naming (all: b.py)." in wire.requests[0].body.decode()
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()


def test_an_editor_is_offered_the_templates_and_they_expand(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    add_review(picode)
    wire.enqueue(api.text("Reviewed."))
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session = await new_session(conn, picode.project)
            offered = await client.wait_for("available_commands_update")
            await prompt(conn, session.session_id, "/review c.py")
            return {c.name: c for c in offered.available_commands}

    offered = asyncio.run(script())
    assert offered["review"].description == "Review a file"
    assert offered["review"].input is not None
    assert offered["review"].input.root.hint == "<file>"
    assert "init" in offered
    assert "Review c.py for naming (all: c.py)." in wire.requests[0].body.decode()


def add_skill(picode: PicodeEnv) -> str:
    folder = picode.project / ".agents" / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship the service\n---\nSECRET-BODY steps\n",
        encoding="utf-8",
    )
    return str(folder / "SKILL.md")


def test_a_skill_is_used_from_print_mode_rpc_and_an_editor(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    path = add_skill(picode)
    wire.enqueue(api.text("Shipped."), api.text("Listed."), api.text("Edited."))

    result = picode.run("-p", "/skill:deploy staging", "--model", api.model)
    assert result.returncode == 0, result.stderr
    sent = wire.requests[0].body.decode()
    assert "/skill:deploy" not in sent
    assert path.replace("\\", "\\\\") in sent and "staging" in sent
    assert "SECRET-BODY" not in sent  # the model reads the file itself

    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "get_commands", "id": "c"})
        listed = child.response("get_commands")["data"]["commands"]
        skill = next(c for c in listed if c["name"] == "skill:deploy")
        assert (skill["description"], skill["source"]) == ("Ship the service", "skill")
        child.send({"type": "prompt", "id": "p", "message": "/skill:deploy"})
        assert child.response("prompt")["success"]
        child.event("agent_end")
        assert path in wire.requests[1].body.decode()
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()

    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session = await new_session(conn, picode.project)
            offered = await client.wait_for("available_commands_update")
            await prompt(conn, session.session_id, "/skill:deploy prod")
            return {c.name: c for c in offered.available_commands}

    offered = asyncio.run(script())
    assert offered["skill:deploy"].description == "Ship the service"
    assert path in wire.requests[2].body.decode()
