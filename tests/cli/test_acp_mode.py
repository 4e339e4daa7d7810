"""``picode --mode acp`` driven by a real ACP client from the agent-client-protocol package."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.cli.acp_client import (
    TIMEOUT,
    FakeEditor,
    connect,
    new_session,
    point_at,
    prompt,
)
from tests.cli.harness import PicodeEnv
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Stall, WireServer


def test_streamed_answer_in_a_session_named_by_its_picode_id(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    wire.enqueue(api.text("Hello ", "from ", "picode."))
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session = await new_session(conn, picode.project)
            return session, await prompt(conn, session.session_id, "say hi")

    session, response = asyncio.run(script())
    assert response.stop_reason == "end_turn"
    assert response.usage.input_tokens == 12
    assert client.agent_text() == "Hello from picode."
    assert "say hi" in wire.requests[0].body.decode()
    (saved,) = picode.session_files()
    assert saved.name.endswith(f"_{session.session_id}.jsonl")
    usage = client.of_kind("usage_update")[-1]
    assert usage.size > usage.used > 0
    assert session.modes.current_mode_id == "never"
    assert [mode.id for mode in session.modes.available_modes] == [
        "never",
        "edits",
        "all",
        "plan",
    ]


def test_cancel_closes_the_model_request(wire: WireServer, picode: PicodeEnv) -> None:
    from acp import RequestError, text_block

    api = point_at(wire, picode)
    wire.enqueue(api.text_then("Thinking about", Stall()))
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            running = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=[text_block("long question")])
            )
            await client.wait_for("agent_message_chunk")
            with pytest.raises(RequestError, match="Invalid request") as refused:
                await prompt(conn, session_id, "meanwhile")
            assert "already running" in str(refused.value.data)
            await conn.cancel(session_id=session_id)
            return await asyncio.wait_for(running, TIMEOUT)

    response = asyncio.run(script())
    assert response.stop_reason == "cancelled"
    assert wire.requests[0].wait_closed(timeout=10), "cancel must close the connection"
    assert len(wire.requests) == 1, "the refused prompt must not reach the model"


def test_a_prompt_sent_right_after_cancel_waits_for_it_and_runs(
    wire: WireServer, picode: PicodeEnv
) -> None:
    from acp import text_block

    api = point_at(wire, picode)
    wire.enqueue(api.text_then("Thinking about", Stall()), api.text("Second answer."))
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            running = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=[text_block("long question")])
            )
            await client.wait_for("agent_message_chunk")
            # Cancel, then ask at once, without waiting for the cancelled prompt's answer.
            await conn.cancel(session_id=session_id)
            second = await prompt(conn, session_id, "next question")
            return await asyncio.wait_for(running, TIMEOUT), second

    first, second = asyncio.run(script())
    assert first.stop_reason == "cancelled"
    assert second.stop_reason == "end_turn"
    assert "Second answer." in client.agent_text()


def test_an_empty_prompt_is_refused_and_never_reaches_the_model(
    wire: WireServer, picode: PicodeEnv
) -> None:
    from acp import RequestError, text_block

    api = point_at(wire, picode)
    client = FakeEditor()

    async def script() -> None:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            for empty in ([], [text_block("   \n")]):
                with pytest.raises(RequestError, match="Invalid params"):
                    await conn.prompt(session_id=session_id, prompt=empty)

    asyncio.run(script())
    assert wire.requests == []


def test_an_edit_is_a_tool_call_with_a_diff(wire: WireServer, picode: PicodeEnv) -> None:
    api = point_at(wire, picode)
    target = picode.project / "app.py"
    target.write_text("x = 1\ny = 2\n")
    wire.enqueue(
        api.tool_call(
            "call_1", "edit", {"path": "app.py", "old_text": "x = 1", "new_text": "x = 3"}
        ),
        api.text("Changed."),
    )
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            return await prompt(conn, session_id, "change x")

    assert asyncio.run(script()).stop_reason == "end_turn"
    (started,) = client.of_kind("tool_call")
    assert (started.tool_call_id, started.kind, started.title) == ("call_1", "edit", "edit app.py")
    assert [location.path for location in started.locations] == [str(target)]
    finished = client.of_kind("tool_call_update")[-1]
    assert finished.status == "completed"
    diff = finished.content[0]
    assert (diff.type, diff.path) == ("diff", str(target))
    assert (diff.old_text, diff.new_text) == ("x = 1\ny = 2\n", "x = 3\ny = 2\n")
    assert target.read_text() == "x = 3\ny = 2\n"


def test_bash_output_streams_while_the_command_runs(wire: WireServer, picode: PicodeEnv) -> None:
    api = point_at(wire, picode)
    # The command waits for the client to have seen its first line before it finishes.
    command = "echo started; while [ ! -e go ]; do sleep 0.02; done; echo finished"
    wire.enqueue(api.tool_call("call_sh", "bash", {"command": command}), api.text("Ran it."))
    client = FakeEditor()

    def shows(text: str) -> Any:
        def found(update: Any) -> bool:
            return (
                update.session_update == "tool_call_update"
                and update.status is None
                and any(text in getattr(part.content, "text", "") for part in update.content or [])
            )

        return found

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            running = asyncio.ensure_future(prompt(conn, session_id, "run it"))
            await client.wait_until(shows("started"))
            (picode.project / "go").write_text("")
            return await running

    assert asyncio.run(script()).stop_reason == "end_turn"
    (started,) = client.of_kind("tool_call")
    assert (started.kind, started.title) == ("execute", f"bash {command}")
    finished = client.of_kind("tool_call_update")[-1]
    assert finished.status == "completed"
    assert "started\nfinished" in finished.content[0].content.text


def test_bash_runs_in_the_editor_terminal_when_offered(wire: WireServer, picode: PicodeEnv) -> None:
    api = point_at(wire, picode)
    wire.enqueue(
        api.tool_call("call_t", "bash", {"command": "echo in the editor; exit 3"}),
        api.text("It failed."),
    )
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model, terminal=True) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            return await prompt(conn, session_id, "run it")

    assert asyncio.run(script()).stop_reason == "end_turn"
    (command,) = client.commands
    assert command[-1].endswith("echo in the editor; exit 3")
    assert client.released == ["term-1"]
    finished = client.of_kind("tool_call_update")[-1]
    assert finished.status == "failed"
    assert [(part.type, part.terminal_id) for part in finished.content] == [("terminal", "term-1")]
    sent = wire.requests[1].body.decode()
    assert "in the editor" in sent and "Exit code: 3" in sent


def test_cancel_kills_the_command_in_the_editor_terminal(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    command = "while true; do sleep 0.05; done"
    wire.enqueue(api.tool_call("call_loop", "bash", {"command": command}))
    client = FakeEditor()

    def embeds_terminal(update: Any) -> bool:
        return update.session_update == "tool_call_update" and any(
            part.type == "terminal" for part in update.content or []
        )

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model, terminal=True) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            running = asyncio.ensure_future(prompt(conn, session_id, "loop"))
            await client.wait_until(embeds_terminal)
            await conn.cancel(session_id=session_id)
            response = await running
            code = await asyncio.wait_for(client.terminals["term-1"].process.wait(), TIMEOUT)
            return response, code

    response, code = asyncio.run(script())
    assert response.stop_reason == "cancelled"
    assert code < 0, "the editor's command must be killed"


def test_set_mode_then_permission_asks_reject_and_allow(
    wire: WireServer, picode: PicodeEnv
) -> None:
    from acp import RequestError

    api = point_at(wire, picode)
    wire.enqueue(
        api.tool_call("call_no", "write", {"path": "denied.txt", "content": "no\n"}),
        api.tool_call("call_yes", "write", {"path": "allowed.txt", "content": "yes\n"}),
        api.text("One of two."),
    )
    client = FakeEditor(answers=["no", "yes"])

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            with pytest.raises(RequestError, match="Invalid params") as refused:
                await conn.set_session_mode(session_id=session_id, mode_id="sometimes")
            assert "never, edits, all, plan" in str(refused.value.data)
            await conn.set_session_mode(session_id=session_id, mode_id="edits")
            return await prompt(conn, session_id, "write two files")

    assert asyncio.run(script()).stop_reason == "end_turn"
    assert [ask.tool_call_id for ask in client.asked] == ["call_no", "call_yes"]
    diff = client.asked[1].content[0]
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(picode.project / "allowed.txt"),
        None,
        "yes\n",
    )
    assert not (picode.project / "denied.txt").exists()
    assert (picode.project / "allowed.txt").read_text() == "yes\n"
    statuses = {u.tool_call_id: u.status for u in client.of_kind("tool_call_update")}
    assert statuses == {"call_no": "failed", "call_yes": "completed"}
    # While the person is asked the call is pending, not running.
    sequence = [(u.tool_call_id, u.status) for u in client.of_kind("tool_call_update") if u.status]
    assert sequence == [
        ("call_no", "pending"),
        ("call_no", "failed"),
        ("call_yes", "pending"),
        ("call_yes", "in_progress"),
        ("call_yes", "completed"),
    ]
    assert "denied" in wire.requests[1].body.decode()


def test_a_command_allowed_always_in_this_folder_is_saved(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    wire.enqueue(
        api.tool_call("call_1", "bash", {"command": "echo first"}),
        api.tool_call("call_2", "bash", {"command": "echo second"}),
        api.text("Both ran."),
    )
    client = FakeEditor(answers=["project"])

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            await conn.set_session_mode(session_id=session_id, mode_id="all")
            return await prompt(conn, session_id, "echo twice")

    assert asyncio.run(script()).stop_reason == "end_turn"
    assert len(client.asked) == 1  # the second echo ran unasked
    (options,) = client.options
    assert [(o.option_id, o.kind) for o in options] == [
        ("yes", "allow_once"),
        ("always", "allow_always"),
        ("project", "allow_always"),
        ("no", "reject_once"),
    ]
    saved = json.loads((picode.home / "data" / "approved-commands.json").read_text("utf-8"))
    assert list(saved["folders"].values()) == [[{"words": ["echo"]}]]


def test_load_replays_the_saved_session_then_continues_it(
    wire: WireServer, picode: PicodeEnv
) -> None:
    from acp import RequestError

    api = point_at(wire, picode)
    wire.enqueue(
        api.tool_call("call_w", "write", {"path": "notes.txt", "content": "first\n"}),
        api.text("Wrote notes."),
        api.text("Still here."),
    )

    async def first() -> str:
        async with connect(picode, FakeEditor(), "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            await prompt(conn, session_id, "take notes")
            return str(session_id)

    session_id = asyncio.run(first())
    client = FakeEditor()

    async def second() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            with pytest.raises(RequestError, match="Invalid params") as unknown:
                await conn.load_session(cwd=str(picode.project), session_id="f" * 32)
            assert "no session id starts with" in str(unknown.value.data)
            loaded = await asyncio.wait_for(
                conn.load_session(cwd=str(picode.project), session_id=session_id), TIMEOUT
            )
            replayed = list(client.updates)
            await prompt(conn, session_id, "are you there")
            return loaded, replayed

    loaded, replayed = asyncio.run(second())
    assert loaded.modes.current_mode_id == "never"
    kinds = [u.session_update for u in replayed]
    assert kinds == [
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
        "available_commands_update",  # picode's own commands, after the history
    ]
    assert replayed[0].content.text == "take notes"
    assert (replayed[1].tool_call_id, replayed[1].kind) == ("call_w", "edit")
    assert replayed[2].status == "completed"
    assert replayed[3].content.text == "Wrote notes."
    body = wire.requests[2].body.decode()
    assert "take notes" in body and "Wrote notes." in body and "are you there" in body
    assert client.agent_text().endswith("Still here.")
    assert len(picode.session_files()) == 1


def test_the_editor_file_system_serves_reads_and_takes_writes(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    target = picode.project / "draft.md"
    target.write_text("saved on disk\n")
    wire.enqueue(
        api.tool_call("call_r", "read", {"path": "draft.md"}),
        api.tool_call(
            "call_e", "edit", {"path": "draft.md", "old_text": "unsaved", "new_text": "kept"}
        ),
        api.text("Done."),
    )
    client = FakeEditor(buffers={str(target): "unsaved buffer\n"})

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model, fs=True) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            return await prompt(conn, session_id, "edit the draft")

    assert asyncio.run(script()).stop_reason == "end_turn"
    assert str(target) in client.reads
    assert "unsaved buffer" in wire.requests[1].body.decode()
    assert client.writes == [(str(target), "kept buffer\n")]
    assert target.read_text() == "saved on disk\n", "the editor decides when to save"
    diff = client.of_kind("tool_call_update")[-1].content[0]
    assert (diff.old_text, diff.new_text) == ("unsaved buffer\n", "kept buffer\n")


def test_model_and_thinking_are_session_options(wire: WireServer, picode: PicodeEnv) -> None:
    from acp import RequestError

    api = point_at(wire, picode)
    wire.enqueue(api.text("thought"), api.text("switched"))

    async def script() -> Any:
        async with connect(picode, FakeEditor(), "--model", api.model) as (conn, _):
            session = await new_session(conn, picode.project)
            session_id = session.session_id
            model = next(o for o in session.config_options if o.id == "model")
            assert model.current_value == api.model
            with pytest.raises(RequestError, match="Invalid params") as level:
                await conn.set_config_option(
                    config_id="thinking", session_id=session_id, value="huge"
                )
            assert "off, minimal, low, medium, high, xhigh" in str(level.value.data)
            await conn.set_config_option(config_id="thinking", session_id=session_id, value="high")
            await prompt(conn, session_id, "think")
            other = next(o.value for o in model.options if o.value != api.model)
            with pytest.raises(RequestError, match="Invalid params"):
                await conn.set_config_option(
                    config_id="model", session_id=session_id, value="nope/x"
                )
            changed = await conn.set_config_option(
                config_id="model", session_id=session_id, value=other
            )
            await prompt(conn, session_id, "switch")
            return other, changed

    other, changed = asyncio.run(script())
    thinking, switched = wire.requests[0].json, wire.requests[1].json
    assert thinking["model"] == api.model.split("/", 1)[1]
    assert thinking["thinking"]["type"] in ("enabled", "adaptive")
    current = {option.id: option.current_value for option in changed.config_options}
    assert current["model"] == other
    assert switched["model"] == other.split("/", 1)[1]


def test_a_missing_key_is_reported_as_authentication(picode: PicodeEnv) -> None:
    from acp import RequestError

    async def script() -> Any:
        args = ("--model", "anthropic/claude-sonnet-4-5")
        async with connect(picode, FakeEditor(), *args) as (conn, initialized):
            methods = initialized.auth_methods
            with pytest.raises(RequestError, match="Authentication required") as refused:
                await conn.authenticate(method_id=methods[0].id)
            session_id = (await new_session(conn, picode.project)).session_id
            with pytest.raises(RequestError, match="Authentication required") as failed:
                await prompt(conn, session_id, "hi")
            return methods, refused.value.data, failed.value.data

    methods, refused, failed = asyncio.run(script())
    env_method = next(method for method in methods if getattr(method, "type", None) == "env_var")
    assert [var.name for var in env_method.vars] == ["ANTHROPIC_API_KEY"]
    assert "ANTHROPIC_API_KEY" in refused["message"]
    assert "ANTHROPIC_API_KEY" in failed["message"]
    assert "picode login anthropic" in refused["message"]  # the way to the auth file


def test_stop_reason_and_usage_come_from_the_reply(wire: WireServer, picode: PicodeEnv) -> None:
    api = point_at(wire, picode)
    wire.enqueue(
        AnthropicStream(input_tokens=40, cache_read=5).text("Cut").stop("max_tokens").response()
    )

    async def script() -> Any:
        async with connect(picode, FakeEditor(), "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            return await prompt(conn, session_id, "long answer")

    response = asyncio.run(script())
    assert response.stop_reason == "max_tokens"
    assert (response.usage.input_tokens, response.usage.cached_read_tokens) == (40, 5)


def test_a_session_in_another_folder_gets_that_folders_trust(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    wire.enqueue(api.text("Here."), api.text("There."))
    (picode.project / ".picode").mkdir()
    (picode.project / ".picode" / "SYSTEM.md").write_text("You are the launch folder.")
    stranger = picode.project.parent / "cloned"
    (stranger / ".picode").mkdir(parents=True)
    (stranger / ".picode" / "SYSTEM.md").write_text("You are a pirate.")
    client = FakeEditor()

    async def script() -> None:
        # Trusted at launch: the launch folder only, never a folder the editor opens later.
        async with connect(picode, client, "--model", api.model, "--trust-project") as (conn, _):
            here = await new_session(conn, picode.project)
            await prompt(conn, here.session_id, "one")
            there = await new_session(conn, stranger)
            await prompt(conn, there.session_id, "two")

    asyncio.run(script())
    first, second = (request.body.decode() for request in wire.requests)
    assert "You are the launch folder." in first
    assert "pirate" not in second
