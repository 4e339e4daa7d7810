"""AgentSession with the scripted provider: persistence, retry, compaction, rules, edit
guard, extensions, context files and approval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from picode.agent.events import AgentEnd
from picode.ai.providers.faux import FauxText, FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.ai.types import AssistantMessage, ToolResultMessage, UserMessage
from picode.session.config.settings import Settings
from picode.session.events import (
    AutoRetryEnd,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    EditGuardAbort,
    RuleTriggered,
)
from picode.session.recovery.rules import is_reminder
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from picode.session.store.sessions import is_compaction_summary

from .conftest import SessionHarness, run


def _file_lines(path: Path | None) -> list[dict]:
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _fast_retry() -> Settings:
    settings = Settings()
    settings.retry.base_delay_ms = 5
    return settings


def test_each_message_is_persisted_and_resumable(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("first answer"), text_turn("second answer"))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("hello")
        path = session.session_file_path
        roles = [e["message"]["role"] for e in _file_lines(path) if e["type"] == "message"]
        assert roles == ["user", "assistant"]
        await session.prompt("again")
        session_id = session.session_id
        await session.close()
        assert session_id is not None

        resumed = await harness.open(faux, session=session_id[:6])
        texts = [m.text for m in resumed.messages]
        assert texts == ["hello", "first answer", "again", "second answer"]
        assert resumed.session_id == session_id
        await resumed.close()

    run(scenario())


def test_no_session_writes_nothing(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("hi"))

    async def scenario() -> None:
        session = await harness.open(faux, session=None)
        await session.prompt("hello")
        assert session.session_file_path is None
        await session.close()

    run(scenario())
    sessions = harness.paths.sessions_dir
    assert not sessions.exists() or not any(sessions.rglob("*.jsonl"))


def test_transient_error_is_retried_and_failed_message_leaves_context(
    harness: SessionHarness,
) -> None:
    overloaded = FauxTurn(error="529 Overloaded: Overloaded", error_before_stream=True)
    faux = harness.faux(overloaded, text_turn("recovered"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=_fast_retry())
        await session.prompt("hello")
        starts = harness.of_type(AutoRetryStart)
        assert [(s.attempt, s.max_attempts) for s in starts] == [(1, 3)]
        assert starts[0].delay_ms == 5
        assert "529" in starts[0].error
        ends = harness.of_type(AutoRetryEnd)
        assert [(e.success, e.attempt) for e in ends] == [(True, 1)]
        # The retried request does not carry the failed message.
        retried = faux.requests[1].messages
        assert [m.role for m in retried] == ["user"]
        assert [m.text for m in session.messages] == ["hello", "recovered"]
        stops = [
            e["message"]["stop_reason"]
            for e in _file_lines(session.session_file_path)
            if e["type"] == "message" and e["message"]["role"] == "assistant"
        ]
        assert stops == ["error", "stop"]
        await session.close()

    run(scenario())


def test_unauthorized_is_not_retried(harness: SessionHarness) -> None:
    faux = harness.faux(
        FauxTurn(
            error="401 Unauthorized (check the API key): invalid key", error_before_stream=True
        )
    )

    async def scenario() -> None:
        session = await harness.open(faux, settings=_fast_retry())
        await session.prompt("hello")
        assert harness.of_type(AutoRetryStart) == []
        assert len(faux.requests) == 1
        last = session.messages[-1]
        assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
        await session.close()

    run(scenario())


def test_retry_gives_up_after_max_attempts(harness: SessionHarness) -> None:
    failing = [FauxTurn(error="503 Service unavailable", error_before_stream=True)] * 4
    faux = harness.faux(*failing)

    async def scenario() -> None:
        session = await harness.open(faux, settings=_fast_retry())
        await session.prompt("hello")
        assert [s.attempt for s in harness.of_type(AutoRetryStart)] == [1, 2, 3]
        ends = harness.of_type(AutoRetryEnd)
        assert len(ends) == 1 and not ends[0].success and "503" in (ends[0].final_error or "")
        assert len(faux.requests) == 4
        await session.close()

    run(scenario())


def test_abort_during_backoff_cancels_retry(harness: SessionHarness) -> None:
    faux = harness.faux(FauxTurn(error="429 Rate limited", error_before_stream=True))
    settings = Settings()
    settings.retry.base_delay_ms = 60_000
    settings.retry.max_delay_ms = 60_000

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)

        def on_event(event: object) -> None:
            if isinstance(event, AutoRetryStart):
                session.abort()

        session.subscribe(on_event)
        await session.prompt("hello")  # returns promptly because the wait was cancelled
        ends = harness.of_type(AutoRetryEnd)
        assert len(ends) == 1 and not ends[0].success
        assert ends[0].final_error == "Retry cancelled"
        assert len(faux.requests) == 1
        assert not session.is_running
        await session.close()

    run(scenario(), timeout=10)


def test_a_message_typed_during_the_backoff_replaces_the_retry_and_starts_at_attempt_one(
    harness: SessionHarness,
) -> None:
    overloaded = FauxTurn(error="529 Overloaded (retry after 1 s)", error_before_stream=True)
    faux = harness.faux(overloaded, overloaded, text_turn("answered the new one"))
    settings = Settings()
    settings.retry.base_delay_ms = 2000  # longer than the server's hint: this is the wait

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)

        def on_event(event: object) -> None:
            if isinstance(event, AutoRetryStart) and len(harness.of_type(AutoRetryStart)) == 1:
                session.steer("never mind, do this instead")

        session.subscribe(on_event)
        await session.prompt("hello")
        starts = harness.of_type(AutoRetryStart)
        assert [(s.attempt, s.delay_ms) for s in starts] == [(1, 2000), (1, 2000)]
        assert [s.error for s in starts] == ["529 Overloaded"] * 2  # the real wait only
        ends = harness.of_type(AutoRetryEnd)
        assert [(e.success, e.superseded) for e in ends] == [(False, True), (True, False)]
        assert len(faux.requests) == 3
        assert faux.requests[1].messages[-1].text == "never mind, do this instead"
        assert session.messages[-1].text == "answered the new one"
        await session.close()

    run(scenario(), timeout=15)


def _compaction_settings() -> Settings:
    settings = Settings()
    settings.compaction.reserve_tokens = 200
    settings.compaction.keep_recent_tokens = 150
    return settings


def test_compaction_at_threshold_keeps_tail_and_summary(harness: SessionHarness) -> None:
    # The system prompt and tool schemas alone are ~3,400 estimated tokens.
    long_reply = "word " * 1200  # ~1,500 tokens estimated
    faux = harness.faux(
        text_turn(long_reply),
        tool_turn(FauxToolCall("ls", {"path": "."})),
        text_turn(long_reply),
        text_turn("SUMMARY: the user asked things"),
        text_turn("after compaction"),
        context_window=6000,
    )

    async def scenario() -> None:
        session = await harness.open(faux, settings=_compaction_settings())
        await session.prompt("first question " * 20)
        await session.prompt("second question " * 20)
        assert [e.reason for e in harness.of_type(CompactionStart)] == ["threshold"]
        end = harness.of_type(CompactionEnd)[0]
        assert end.summary is not None and "SUMMARY" in end.summary
        assert is_compaction_summary(session.messages[0])
        await session.prompt("third")
        request = faux.last_request.messages
        assert is_compaction_summary(request[0])
        call_ids = {c.id for m in request if isinstance(m, AssistantMessage) for c in m.tool_calls}
        for message in request:
            if isinstance(message, ToolResultMessage):
                assert message.tool_call_id in call_ids  # no orphan tool result
        assert any(e["type"] == "compaction" for e in _file_lines(session.session_file_path))
        await session.close()

    run(scenario())


def test_spend_counts_the_summary_and_survives_a_compaction_and_a_resume(
    harness: SessionHarness,
) -> None:
    faux = harness.faux(
        text_turn("first answer " * 100, usage=(1000, 100)),
        text_turn("second answer " * 100, usage=(2000, 200)),
        text_turn("SUMMARY of the start", usage=(500, 50)),
        text_turn("third answer", usage=(700, 70)),
    )

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("one")
        await session.prompt("two")
        assert (session.usage.input, session.usage.output) == (3000, 300)
        await session.compact(keep_recent_tokens=50)
        assert is_compaction_summary(session.messages[0])
        # The summary's own request is spent too.
        assert (session.usage.input, session.usage.output) == (3500, 350)
        await session.prompt("three")
        assert (session.usage.input, session.usage.output) == (4200, 420)
        session_id = session.session_id
        await session.close()

        resumed = await harness.open(faux, session=session_id)
        # What the summary replaced is still counted: spend never shrinks on a resume.
        assert (resumed.usage.input, resumed.usage.output) == (4200, 420)
        await resumed.close()

    run(scenario())


def test_overflow_compacts_once_then_retries(harness: SessionHarness) -> None:
    overflow = FauxTurn(
        error="400 Bad request: prompt is too long: 210000 tokens > 200000 maximum",
        error_before_stream=True,
    )
    faux = harness.faux(
        text_turn("an earlier answer " * 60),
        overflow,
        text_turn("SUMMARY of earlier work"),
        text_turn("answer after compaction"),
    )
    settings = Settings()
    settings.compaction.keep_recent_tokens = 10

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("earlier question " * 30)
        await session.prompt("now the big one")
        assert [e.reason for e in harness.of_type(CompactionStart)] == ["overflow"]
        retried = faux.last_request.messages
        assert is_compaction_summary(retried[0])
        assert retried[-1].text == "now the big one"
        assert session.messages[-1].text == "answer after compaction"
        await session.close()

    run(scenario())


def _write_rule(cwd: Path, name: str, body: str) -> None:
    rules = cwd / ".picode" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / f"{name}.md").write_text(body)


def test_rule_triggered_by_text_delta_retries_with_reminder(harness: SessionHarness) -> None:
    _write_rule(
        harness.cwd,
        "no-var",
        "---\ncondition: \\bvar\\s+\\w+\\s*=\nscope: text\n---\nUse let or const, never var.\n",
    )
    bad = FauxTurn([FauxText("Here you go: var x = 1; and much more text " * 20)], delay=0.002)
    faux = harness.faux(bad, text_turn("Here you go: const x = 1;"))

    async def scenario() -> None:
        session = await harness.open(faux, project_trusted=True)
        await session.prompt("write js")
        assert [e.rule for e in harness.of_type(RuleTriggered)] == ["no-var"]
        retried = faux.requests[1].messages
        assert any(is_reminder(m) for m in retried)
        assert not any(isinstance(m, AssistantMessage) for m in retried)  # partial is gone
        assert session.messages[-1].text == "Here you go: const x = 1;"
        lines = _file_lines(session.session_file_path)
        assert any(e["type"] == "custom" and e.get("custom_type") == "ttsr_fired" for e in lines)
        assert not any(
            e["type"] == "message" and "var x" in json.dumps(e["message"]) for e in lines
        )
        await session.close()

    run(scenario())


def test_rule_triggered_by_tool_argument_delta(harness: SessionHarness) -> None:
    _write_rule(
        harness.cwd,
        "no-force-push",
        "---\ncondition: push\\s+--force\nscope: tool:bash\n---\nNever force-push.\n",
    )
    bad = tool_turn(FauxToolCall("bash", {"command": "git push --force origin main"}), delay=0.002)
    bad.chunk_size = 4
    faux = harness.faux(bad, text_turn("I will not force-push."))

    async def scenario() -> None:
        session = await harness.open(faux, project_trusted=True)
        await session.prompt("ship it")
        assert [e.rule for e in harness.of_type(RuleTriggered)] == ["no-force-push"]
        retried = faux.requests[1].messages
        assert any(is_reminder(m) for m in retried)
        assert not any(isinstance(m, ToolResultMessage) for m in retried)
        await session.close()

    run(scenario())


def test_edit_guard_aborts_impossible_edit_before_stream_ends(harness: SessionHarness) -> None:
    (harness.cwd / "app.py").write_text("def main():\n    print('hello')\n")
    old_text = "def completely_different_function():\n    return 42\n" * 5
    edit = FauxToolCall("edit", {"path": "app.py", "old_text": old_text, "new_text": "x"})
    faux = harness.faux(
        FauxTurn([edit], chunk_size=4, delay=0.002), text_turn("I will read the file first.")
    )

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("edit it")
        guards = harness.of_type(EditGuardAbort)
        assert len(guards) == 1 and guards[0].path == "app.py"
        retried = faux.requests[1].messages
        result = retried[-1]
        assert isinstance(result, ToolResultMessage) and result.is_error
        assert "app.py" in result.text
        call = retried[-2]
        assert isinstance(call, AssistantMessage) and call.stop_reason == "toolUse"
        # The stream was cut: the model never finished sending old_text.
        assert len(call.tool_calls[0].arguments.get("old_text", "")) < len(old_text)
        assert (harness.cwd / "app.py").read_text().startswith("def main")
        await session.close()

    run(scenario())


def test_edit_guard_leaves_valid_edit_alone(harness: SessionHarness) -> None:
    (harness.cwd / "app.py").write_text("def main():\n    print('hello')\n")
    edit = FauxToolCall(
        "edit", {"path": "app.py", "old_text": "    print('hello')\n", "new_text": "    pass\n"}
    )
    faux = harness.faux(FauxTurn([edit], chunk_size=3, delay=0.001), text_turn("done"))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("edit it")
        assert harness.of_type(EditGuardAbort) == []
        assert (harness.cwd / "app.py").read_text() == "def main():\n    pass\n"
        await session.close()

    run(scenario())


def test_extension_blocks_a_tool_call(harness: SessionHarness) -> None:
    extensions = harness.paths.extensions_dir
    extensions.mkdir(parents=True)
    (extensions / "guard.py").write_text(
        "def register(api):\n"
        "    def on_call(info):\n"
        "        if info.name == 'bash':\n"
        "            return 'bash is disabled by policy'\n"
        "    api.on('tool_call', on_call)\n"
    )
    faux = harness.faux(tool_turn(FauxToolCall("bash", {"command": "echo hi"})), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, load_extensions=True)
        await session.prompt("run it")
        result = faux.requests[1].messages[-1]
        assert isinstance(result, ToolResultMessage) and result.is_error
        assert "bash is disabled by policy" in result.text
        await session.close()

    run(scenario())


def test_agents_md_from_two_folder_levels(harness: SessionHarness) -> None:
    (harness.cwd / "AGENTS.md").write_text("OUTER RULES")
    inner = harness.cwd / "pkg"
    inner.mkdir()
    (inner / "AGENTS.md").write_text("INNER RULES")
    faux = harness.faux(text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, cwd=inner)
        await session.prompt("hi")
        prompt = faux.last_request.system_prompt or ""
        assert "OUTER RULES" in prompt and "INNER RULES" in prompt
        assert prompt.index("OUTER RULES") < prompt.index("INNER RULES")
        assert "read" in prompt and str(inner) in prompt
        await session.close()

    run(scenario())


def test_approval_denied_with_reason_and_always(harness: SessionHarness) -> None:
    asked: list[ApprovalRequest] = []
    decisions = [ApprovalDecision("no", "not on main"), ApprovalDecision("always")]

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return decisions.pop(0)

    faux = harness.faux(
        tool_turn(FauxToolCall("bash", {"command": "echo one"})),
        tool_turn(FauxToolCall("bash", {"command": "echo two"})),
        tool_turn(FauxToolCall("bash", {"command": "echo three"})),
        text_turn("done"),
    )

    async def scenario() -> None:
        session = await harness.open(faux, approver=approver, approval="all")
        await session.prompt("go")
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert results[0].is_error and "not on main" in results[0].text
        assert not results[1].is_error and "two" in results[1].text
        assert not results[2].is_error and "three" in results[2].text
        assert [r.preview for r in asked] == ["echo one", "echo two"]
        await session.close()

    run(scenario())


def test_model_and_thinking_changes_are_persisted(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("hi")
        session.set_thinking_level("high")
        path = session.session_file_path
        await session.close()
        kinds = [e["type"] for e in _file_lines(path)]
        assert "thinking_level_change" in kinds and "model_change" in kinds
        resumed = await harness.open(faux, session=str(path))
        assert resumed.thinking == "high"
        await resumed.close()

    run(scenario())


def test_prompt_while_busy_is_a_clear_error(harness: SessionHarness) -> None:
    faux = harness.faux(FauxTurn([FauxText("thinking...")], hang=True))

    async def scenario() -> None:
        import asyncio

        from picode.session.agent_session import AgentBusyError

        session = await harness.open(faux)
        task = asyncio.ensure_future(session.prompt("first"))
        await asyncio.wait_for(faux.request_seen.wait(), 5)
        with pytest.raises(AgentBusyError, match="steer"):
            await session.prompt("second")
        session.abort()
        await asyncio.wait_for(task, 5)
        last = session.messages[-1]
        assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
        assert isinstance(session.messages[0], UserMessage)
        await session.close()

    run(scenario())


def test_a_message_queued_as_the_run_ends_is_still_delivered(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("First answer."), text_turn("Second answer."))

    async def scenario() -> None:
        session = await harness.open(faux)

        def late(event: Any) -> None:
            # The agent has finished its last turn, the session is still winding down.
            if isinstance(event, AgentEnd) and session.is_running and not late_sent:
                late_sent.append(True)
                session.steer("one more thing")

        late_sent: list[bool] = []
        session.subscribe(late)
        await session.prompt("hello")
        assert late_sent
        assert [m.text for m in session.messages if isinstance(m, UserMessage)] == [
            "hello",
            "one more thing",
        ]
        last = session.messages[-1]
        assert isinstance(last, AssistantMessage) and last.text == "Second answer."
        assert session.queued_steering == [] and not session.is_running
        await session.close()

    run(scenario())


@pytest.mark.parametrize("switch", ["new", "resume", "fork"])
def test_always_approvals_end_with_the_conversation(harness: SessionHarness, switch: str) -> None:
    asked: list[str] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request.preview)
        return ApprovalDecision("always")

    faux = harness.faux(
        tool_turn(FauxToolCall("bash", {"command": "echo one"})),
        tool_turn(FauxToolCall("bash", {"command": "echo two"})),
        text_turn("done"),
        tool_turn(FauxToolCall("bash", {"command": "echo three"})),
        text_turn("done again"),
    )

    async def scenario() -> None:
        session = await harness.open(faux, approver=approver, approval="all")
        await session.prompt("go")
        assert asked == ["echo one"]  # "always" holds within the conversation
        first = session.session_file_path
        if switch == "new":
            await session.new_session()
        elif switch == "resume":
            await session.new_session()
            await session.switch_session(str(first))
        else:
            await session.fork(session.user_messages_for_fork()[0][0])
        await session.prompt("again")
        assert asked == ["echo one", "echo three"]
        await session.close()

    run(scenario())
