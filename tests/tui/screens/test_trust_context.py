"""The trust question shows what the folder adds as context apart from what it asks about."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.widgets import Static

from picode.session.safety.trust import ProjectTrust, TrustItem
from picode.tui.trust_prompt import TrustScreen
from tests.support import run


def test_the_context_part_lists_the_project_templates_after_the_gated_items() -> None:
    trust = ProjectTrust(
        Path("/somewhere"),
        [TrustItem(".picode/SYSTEM.md", "replaces picode's system prompt")],
        "fp",
        context=[TrustItem(".picode/prompts", "adds prompt templates you may send: /review")],
    )
    app: App[None] = App()

    async def scenario() -> None:
        async with app.run_test() as pilot:
            app.push_screen(TrustScreen(trust))
            await pilot.pause()
            context = app.screen.query_one("#trust-context", Static)
            text = str(context.render())
            assert "It also adds context, used trusted or not:" in text
            assert ".picode/prompts: adds prompt templates you may send: /review" in text
            items = str(app.screen.query_one("#trust-items", Static).render())
            assert "/review" not in items

    run(scenario())
