"""What the pickers list, pinned: models, session summaries at a fixed time, and a session
store that lists them (for the picker tests and their snapshots)."""

from __future__ import annotations

import threading
from pathlib import Path

from picode.ai.models import Model, ModelCost
from picode.session.store.index import SessionSummary

NOW_S = 1_700_000_000.0
NOW_MS = int(NOW_S * 1000)


def make_models() -> list[Model]:
    def model(
        provider: str, model_id: str, name: str, window: int, cost: tuple[float, float]
    ) -> Model:
        return Model(
            id=model_id,
            name=name,
            api="faux",
            provider=provider,
            context_window=window,
            cost=ModelCost(input=cost[0], output=cost[1]),
        )

    return [
        model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, (3, 15)),
        model("anthropic", "claude-haiku-4-5", "Claude Haiku 4.5", 200_000, (1, 5)),
        model("openai", "gpt-5", "GPT-5", 400_000, (1.25, 10)),
        model("openai", "gpt-5-mini", "GPT-5 mini", 400_000, (0.25, 2)),
        model("google", "gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, (1.25, 10)),
        model("local", "qwen3-coder", "qwen3-coder", 32_768, (0, 0)),
    ]


def summary(
    index: int, cwd: Path, *, name: str | None = None, first: str | None = None
) -> SessionSummary:
    return SessionSummary(
        id=f"{index:032x}",
        path=Path(f"/sessions/{index}.jsonl"),
        cwd=cwd,
        created=NOW_MS - index * 3_600_000,
        modified=NOW_MS - index * 3_600_000 - 180_000,
        name=name,
        first_message=first if first is not None else f"message {index}",
        message_count=index + 1,
        size_bytes=2048 * (index + 1),
    )


class FakeStore:
    """Lists fixed summaries; ``cwd=None`` lists everything. Records the calls."""

    def __init__(
        self,
        sessions: list[SessionSummary],
        *,
        fail: str | None = None,
        gate: threading.Event | None = None,
    ) -> None:
        self.sessions = sessions
        self.fail = fail
        self.gate = gate
        self.calls: list[Path | None] = []
        self.threads: list[str] = []

    def list(self, cwd: Path | None = None) -> list[SessionSummary]:
        self.calls.append(cwd)
        self.threads.append(threading.current_thread().name)
        if self.gate is not None and not self.gate.wait(10):
            raise TimeoutError("the test never opened the gate")
        if self.fail:
            raise OSError(self.fail)
        return [s for s in self.sessions if cwd is None or s.cwd == cwd]
