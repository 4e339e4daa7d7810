"""The ``task`` tool on a real AgentSession with the scripted provider: fresh child contexts,
parallel children, results in order, abort and steering, usage, the linked transcript."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from picode.agent.events import ToolExecutionEnd, ToolExecutionUpdate
from picode.agent.tool import ToolResult
from picode.ai.providers.faux import FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.ai.types import AssistantMessage, Context, ToolResultMessage, UserMessage
from picode.session.config.settings import Settings
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from picode.session.subagents import LINK_ENTRY, subagent_state
from tests.session.conftest import SessionHarness, run, wait_until


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def task(description: str, prompt: str, agent: str | None = None) -> FauxToolCall:
    args: dict[str, Any] = {"description": description, "prompt": prompt}
    if agent is not None:
        args["agent"] = agent
    return FauxToolCall("task", args)


def last_user_text(context: Context) -> str:
    user = [m for m in context.messages if isinstance(m, UserMessage)]
    return user[-1].text if user else ""


def by_prompt(answers: dict[str, FauxTurn], parent: list[FauxTurn]) -> Any:
    """A script that serves children by their prompt and the parent in order."""

    def script(context: Context) -> FauxTurn:
        first = next((m for m in context.messages if isinstance(m, UserMessage)), None)
        if first is not None and first.text in answers:
            return answers[first.text]
        return parent.pop(0)

    return script


def scripted(harness: SessionHarness, answers: dict[str, FauxTurn], parent: list[FauxTurn]) -> Any:
    script = by_prompt(answers, parent)
    return harness.faux(*[script] * (len(answers) + len(parent)))


def test_two_tasks_run_with_fresh_contexts_and_return_in_order(harness: SessionHarness) -> None:
    parent = [
        tool_turn(task("find a", "job A"), task("find b", "job B")),
        text_turn("both done"),
    ]
    faux = scripted(
        harness,
        {"job A": text_turn("answer A", usage=(10, 5)), "job B": text_turn("answer B")},
        parent,
    )

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("parent secret question")
        child_requests = [r for r in faux.requests if r.messages[0].text in ("job A", "job B")]
        assert len(child_requests) == 2
        for request in child_requests:
            # A fresh context: the child's prompt alone, none of the parent's messages.
            assert len(request.messages) == 1
            assert "parent secret question" not in json.dumps(str(request.messages))
            assert "task" not in request.tool_names
            assert set(request.tool_names) == {"read", "grep", "find", "ls", "bash"}
            assert request.system_prompt is not None
            assert "You are a subagent" in request.system_prompt
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert [r.tool_name for r in results] == ["task", "task"]
        assert [r.content[0].text for r in results] == ["answer A", "answer B"]  # type: ignore[union-attr]
        assert not any(r.is_error for r in results)
        state = subagent_state(results[0].details)
        assert state is not None and state["status"] == "done"
        assert state["description"] == "find a"
        assert session.messages[-1].text == "both done"  # type: ignore[union-attr]
        await session.close()

    run(scenario())


def test_children_run_concurrently_and_abort_stops_both(harness: SessionHarness) -> None:
    parent = [tool_turn(task("one", "job A"), task("two", "job B"))]
    hang = FauxTurn([], hang=True)
    faux = scripted(harness, {"job A": hang, "job B": hang}, parent)

    async def scenario() -> None:
        session = await harness.open(faux)
        running = asyncio.ensure_future(session.prompt("go"))
        # Both children have asked the model while neither has finished: they run at once.
        await wait_until(lambda: len(faux.requests) == 3)
        session.abort()
        await running
        assert faux.aborts == 2
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert len(results) == 2 and all(r.is_error for r in results)
        await session.close()

    run(scenario())


def test_steering_stops_a_pending_subagent(harness: SessionHarness) -> None:
    parent = [tool_turn(task("quick", "job A"), task("slow", "job B")), text_turn("ok")]
    # Job A ends only once the steer is queued: steering is looked at when a call ends, and
    # an A that ended first would leave B running with nothing left to look again.
    steered = asyncio.Event()
    answer_a = text_turn("answer A", release=steered)
    faux = scripted(harness, {"job A": answer_a, "job B": FauxTurn([], hang=True)}, parent)

    async def scenario() -> None:
        session = await harness.open(faux)
        running = asyncio.ensure_future(session.prompt("go"))
        await wait_until(lambda: len(faux.requests) >= 3)  # the parent and both children
        session.steer("change of plan")
        steered.set()
        await asyncio.wait_for(running, 10)
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert [r.is_error for r in results] == [False, True]
        assert faux.aborts == 1
        await session.close()

    run(scenario())


def test_child_usage_counts_in_the_parents(harness: SessionHarness) -> None:
    parent = [tool_turn(task("count", "job A"), usage=(100, 10)), text_turn("ok", usage=(1, 1))]
    faux = scripted(harness, {"job A": text_turn("answer", usage=(1000, 200))}, parent)

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("go")
        usage = session.usage
        assert usage.input == 100 + 1000 + 1
        assert usage.output == 10 + 200 + 1
        await session.close()

    run(scenario())


def test_progress_updates_carry_the_childs_state(harness: SessionHarness) -> None:
    parent = [tool_turn(task("look", "job A")), text_turn("ok")]
    child = [tool_turn(FauxToolCall("ls", {"path": "."})), text_turn("found it")]
    faux = scripted(harness, {}, parent)
    turns = iter(child)

    def script(context: Context) -> FauxTurn:
        first = next((m for m in context.messages if isinstance(m, UserMessage)), None)
        if first is not None and first.text == "job A":
            return next(turns)
        return parent.pop(0)

    faux.turns = [script] * 4

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("go")
        updates = [subagent_state(e.partial.details) for e in harness.of_type(ToolExecutionUpdate)]
        assert any(u is not None and u["tool"] == "ls ." for u in updates)
        end = harness.of_type(ToolExecutionEnd)[0]
        state = subagent_state(end.result.details)
        assert state is not None
        assert state["tool_uses"] == 1
        assert ["tool", "ls ."] in state["transcript"]
        assert ["text", "found it"] in state["transcript"]
        await session.close()

    run(scenario())


def test_transcript_is_saved_and_linked(harness: SessionHarness) -> None:
    parent = [tool_turn(task("save", "job A")), text_turn("ok")]
    faux = scripted(harness, {"job A": text_turn("answer A")}, parent)

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("go")
        path = session.session_file_path
        assert path is not None
        saved = entries(path)
        links = [e for e in saved if e.get("custom_type") == LINK_ENTRY]
        assert len(links) == 1, saved
        child_file = Path(links[0]["data"]["session_file"])
        texts = [
            json.dumps(e["message"]) for e in entries(child_file) if e.get("type") == "message"
        ]
        assert any("job A" in t for t in texts) and any("answer A" in t for t in texts)
        # The child is a session of its own, whose header says whose task it ran: listed
        # as such (the picker leaves it out), and never the one -c continues.
        assert entries(child_file)[0]["subagent_of"] == session.session_id
        listed = {info.path: info.subagent_of for info in session.store.list(session.cwd)}
        assert listed == {path: None, child_file: session.session_id}
        os.utime(child_file)  # written last, as a child that outlived a parent's crash
        continued = session.store.continue_latest(session.cwd)
        assert continued is not None and continued.path == path
        continued.close()
        await session.close()

    run(scenario())


def test_child_asks_the_parents_approver(harness: SessionHarness) -> None:
    """Through the parent's approver, saying which subagent asks; the parent's own calls
    say nobody."""
    parent = [
        tool_turn(task("run\x1b[2J it", "job A")),
        tool_turn(FauxToolCall("bash", {"command": "echo parent"})),
        text_turn("ok"),
    ]
    child = iter([tool_turn(FauxToolCall("bash", {"command": "echo hi"})), text_turn("done")])

    def script(context: Context) -> FauxTurn:
        if last_user_text(context) == "job A" or (
            len(context.messages) > 1
            and (
                context.messages[0].text == "job A"  # type: ignore[union-attr]
            )
        ):
            return next(child)
        return parent.pop(0)

    faux = harness.faux(*[script] * 5)
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision("no", "not now")

    async def scenario() -> None:
        session = await harness.open(faux, approver=approver, approval="all")
        await session.prompt("go")
        assert [r.tool_name for r in asked] == ["bash", "bash"]
        child_ask, parent_ask = [r for r in asked if r.tool_name == "bash"]
        assert child_ask.args == {"command": "echo hi"} and child_ask.origin == "run\x1b[2J it"
        assert child_ask.asker == "Subagent “run␛[2J it”"
        assert parent_ask.args == {"command": "echo parent"}
        assert parent_ask.origin is None and parent_ask.asker is None
        # And which of the parent's calls runs that subagent (a front end shows it waiting).
        [task_call] = [
            block
            for message in session.messages
            if isinstance(message, AssistantMessage)
            for block in message.tool_calls
            if block.name == "task"
        ]
        assert child_ask.origin_call_id == task_call.id and task_call.id
        assert parent_ask.origin_call_id is None
        await session.close()

    run(scenario())


def test_subagents_can_be_turned_off(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("hi"))
    settings = Settings()
    settings.subagents.enabled = False

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("go")
        assert "task" not in faux.last_request.tool_names
        await session.close()

    run(scenario())


def test_unknown_agent_is_an_error_the_model_reads(harness: SessionHarness) -> None:
    faux = harness.faux(tool_turn(task("x", "job", agent="nope")), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("go")
        result = next(m for m in session.messages if isinstance(m, ToolResultMessage))
        assert result.is_error
        assert "Unknown agent 'nope'" in result.content[0].text  # type: ignore[union-attr]
        assert "explore" in result.content[0].text  # type: ignore[union-attr]
        await session.close()

    run(scenario())


def test_a_definition_chooses_tools_instructions_and_model(harness: SessionHarness) -> None:
    agents = harness.cwd / ".picode" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews\ntools: read, write, nosuch\n---\n"
        "Review with care.\n"
    )
    (agents / "elsewhere.md").write_text(
        "---\nname: elsewhere\ndescription: Other model\nmodel: nowhere/model-x\n---\n"
    )
    parent = [
        tool_turn(task("review", "job A", "reviewer"), task("other", "job B", "elsewhere")),
        text_turn("ok"),
    ]
    faux = scripted(harness, {"job A": text_turn("fine")}, parent)

    async def scenario() -> None:
        session = await harness.open(faux, project_trusted=True)
        await session.prompt("go")
        child = next(r for r in faux.requests if r.messages[0].text == "job A")  # type: ignore[union-attr]
        # Narrowed to the parent's tools: "nosuch" is none of them.
        assert child.tool_names == ["read", "write"]
        assert child.system_prompt is not None and "Review with care." in child.system_prompt
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert [r.is_error for r in results] == [False, True]
        assert "Agent 'elsewhere' cannot start" in results[1].content[0].text  # type: ignore[union-attr]
        warnings = [e.text for e in harness.events if getattr(e, "source", None) == "agents"]
        assert any("nosuch" in text for text in warnings)
        await session.close()

    run(scenario())


def test_an_untrusted_projects_agent_cannot_choose_the_model(harness: SessionHarness) -> None:
    """Its instructions and tools apply, its model and thinking do not; the person's own
    definitions keep theirs."""
    project = harness.cwd / ".claude" / "agents"
    project.mkdir(parents=True)
    (project / "pricey.md").write_text(
        "---\nname: pricey\ndescription: Costly\nmodel: nowhere/model-x\nthinking: high\n---\n"
        "Be thorough.\n"
    )
    personal = harness.paths.config_dir / "agents"
    personal.mkdir(parents=True)
    (personal / "mine.md").write_text(
        "---\nname: mine\ndescription: Mine\nmodel: nowhere/model-y\n---\n"
    )
    parent = [
        tool_turn(task("costly", "job A", "pricey"), task("own", "job B", "mine")),
        text_turn("ok"),
    ]
    faux = scripted(harness, {"job A": text_turn("done")}, parent)

    async def scenario() -> None:
        session = await harness.open(faux)  # a folder not trusted
        await session.prompt("go")
        child = next(r for r in faux.requests if r.messages[0].text == "job A")  # type: ignore[union-attr]
        assert child.system_prompt is not None and "Be thorough." in child.system_prompt
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert [r.is_error for r in results] == [False, True]
        assert "done" in results[0].content[0].text  # type: ignore[union-attr]
        assert "Agent 'mine' cannot start" in results[1].content[0].text  # type: ignore[union-attr]
        warnings = [e.text for e in harness.events if getattr(e, "source", None) == "agents"]
        told = [text for text in warnings if "'pricey'" in text]
        assert len(told) == 1 and "nowhere/model-x" in told[0] and "not trusted" in told[0]
        assert not any("'mine'" in text for text in warnings)
        await session.close()

    run(scenario())


def test_a_resumed_session_still_counts_its_subagents(harness: SessionHarness) -> None:
    parent = [tool_turn(task("count", "job A"), usage=(100, 10)), text_turn("ok", usage=(1, 1))]
    faux = scripted(harness, {"job A": text_turn("answer", usage=(1000, 200))}, parent)

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("go")
        before = session.usage
        session_id = session.session_id
        await session.close()
        assert session_id is not None
        resumed = await harness.open(faux, session=session_id)
        assert resumed.usage == before
        assert resumed.usage.input == 1101
        await resumed.close()

    run(scenario())


def test_a_quiet_child_still_reports_its_time() -> None:
    from picode.session.subagents.progress import ChildProgress
    from tests.support import FakeClock

    clock = FakeClock()
    reports: list[ToolResult] = []
    progress = ChildProgress("look", "general", reports.append, clock=clock)
    progress.report()
    clock.advance(0.5)
    progress.tick(1.0)
    assert len(reports) == 1  # reported half a second ago: nothing new to say
    clock.advance(0.6)
    progress.tick(1.0)
    assert len(reports) == 2
    state = subagent_state(reports[-1].details)
    assert state is not None and state["elapsed_s"] == 1.1


def test_tool_hooks_guard_the_childs_calls_and_session_hooks_stay_the_parents(
    harness: SessionHarness,
) -> None:
    from picode.session.config.hooks import HookSpec

    log = harness.root / "hooks.log"
    settings = Settings()
    settings.hooks = {
        "PreToolUse": [HookSpec(command=f"echo pre >> '{log}'", matcher="ls")],
        "UserPromptSubmit": [HookSpec(command=f"echo prompt >> '{log}'")],
        "SessionStart": [HookSpec(command=f"echo start >> '{log}'")],
    }
    parent = [tool_turn(task("look", "job A")), text_turn("ok")]
    child = iter([tool_turn(FauxToolCall("ls", {"path": "."})), text_turn("listed")])

    def script(context: Context) -> FauxTurn:
        first = context.messages[0]
        if isinstance(first, UserMessage) and first.text == "job A":
            return next(child)
        return parent.pop(0)

    faux = harness.faux(*[script] * 4)

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("go")
        await session.close()

    run(scenario())
    assert sorted(log.read_text().split()) == ["pre", "prompt", "start"]
