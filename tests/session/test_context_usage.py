"""What fills the context, part by part (``AgentSession.context_usage``, ``/context``)."""

from __future__ import annotations

from picode.ai.builder import tokens_for_chars
from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.session.config.settings import Settings

from .conftest import SessionHarness, run


def test_the_parts_name_the_context_files_skills_tools_and_the_conversation(
    harness: SessionHarness,
) -> None:
    agents = "Run the tests with pytest -q.\n" * 40
    (harness.cwd / "AGENTS.md").write_text(agents, encoding="utf-8")
    skill = harness.cwd / ".agents" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Ships it.\n---\nSteps.", encoding="utf-8")
    (harness.cwd / "big.txt").write_text(("x" * 79 + "\n") * 100, encoding="utf-8")
    (harness.cwd / "small.txt").write_text("y" * 40, encoding="utf-8")
    faux = harness.faux(
        tool_turn(
            FauxToolCall("read", {"path": "small.txt"}), FauxToolCall("read", {"path": "big.txt"})
        ),
        text_turn("Read both."),
    )
    settings = Settings.model_validate({"compaction": {"reserve_tokens": 1000}})

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("read the two files")
        usage = session.context_usage()
        shares = {share.label: share.tokens for share in usage.shares}
        assert usage.window == session.context_window
        assert usage.in_use == session.context_tokens
        assert usage.compacts_at == usage.window - 1000
        label = "AGENTS.md"  # from the project's folder
        assert shares[label] >= tokens_for_chars(len(agents.strip()))
        assert shares["skills (1)"] > 0
        tools = len(session._agent.state.tools)
        assert shares[f"tool definitions ({tools})"] > 0
        assert shares["your messages"] == tokens_for_chars(len("read the two files"))
        assert shares["tool results"] >= tokens_for_chars(8000 + 40)
        assert shares["replies"] >= tokens_for_chars(len("Read both."))
        # The instructions are what is left of the prompt: the files and skills are not
        # counted twice.
        prompt = tokens_for_chars(len(session._agent.state.system_prompt))
        assert shares["picode's instructions"] + shares[label] + shares["skills (1)"] <= prompt + 3
        first, second = usage.largest
        assert (first.tool, first.arguments) == ("read", {"path": "big.txt"})
        assert first.tokens > second.tokens

    run(scenario())


def test_with_compaction_off_there_is_no_threshold_and_no_file_is_named(
    harness: SessionHarness,
) -> None:
    settings = Settings.model_validate({"compaction": {"enabled": False}})

    async def scenario() -> None:
        session = await harness.open(harness.faux(), settings=settings)
        usage = session.context_usage()
        assert usage.compacts_at is None
        assert [share.label for share in usage.shares][:2] == [
            "picode's instructions",
            f"tool definitions ({len(session._agent.state.tools)})",
        ]
        assert usage.largest == ()

    run(scenario())
