"""``picode -p --plan``: with no one to approve a plan, plan mode stays on, nothing is
changed, and the model is told to end with its plan, which picode prints."""

from __future__ import annotations

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

PLAN = "1. Write out.txt"


def test_print_mode_plan_ends_with_the_plan_and_changes_nothing(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(
        api.tool_call("call_write", "write", {"path": "out.txt", "content": "x"}),
        api.tool_call("call_bash", "bash", {"command": "touch by-bash"}),
        api.tool_call("call_plan", "exit_plan_mode", {"plan": PLAN}),
        api.text(PLAN),
    )

    result = picode.run("-p", "--plan", "write out.txt", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout == PLAN + "\n"
    assert not (picode.project / "out.txt").exists()
    assert not (picode.project / "by-bash").exists()
    bodies = [request.body.decode() for request in wire.requests]
    assert "Plan mode is on" in bodies[0]  # told with the prompt
    assert "plan mode" in bodies[1] and "plan mode" in bodies[2]  # write, bash refused
    assert "No one can approve a plan" in bodies[3]
