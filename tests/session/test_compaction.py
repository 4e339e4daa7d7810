from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Sequence

import pytest

from picode.ai.abort import AbortController
from picode.ai.options import StreamOptions
from picode.ai.providers.faux import FauxProvider, FauxTurn, text_turn
from picode.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from picode.session.recovery.compaction import (
    TOOL_RESULT_LIMIT,
    CompactionError,
    context_tokens,
    estimate_message_tokens,
    file_operations,
    find_cut_index,
    nothing_to_compact,
    serialize_for_summary,
    should_compact,
    smaller_tail,
    summarize,
)
from picode.session.store.format import compaction_summary_message

_clock = itertools.count(1_000_000)


def tokens_of(chars: int) -> int:
    return (chars + 3) // 4


def user(text: str) -> UserMessage:
    return UserMessage(text, timestamp=next(_clock))


def assistant(
    text: str = "",
    calls: Sequence[ToolCall] = (),
    *,
    usage: Usage | None = None,
    stop: str = "stop",
) -> AssistantMessage:
    content: list = [TextContent(text)] if text else []
    content.extend(calls)
    return AssistantMessage(
        content=content,
        api="faux",
        provider="faux",
        model="m",
        usage=usage or Usage(estimated=True),
        stop_reason=stop,  # type: ignore[arg-type]
        timestamp=next(_clock),
    )


def result(call: ToolCall, text: str, *, error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        call.id, call.name, [TextContent(text)], is_error=error, timestamp=next(_clock)
    )


# --- token accounting ----------------------------------------------------------------------


def test_context_tokens_uses_last_real_usage_plus_estimates_after_it() -> None:
    call = ToolCall("c1", "read", {"path": "a.py"})
    real = Usage(input=1000, output=100, cache_read=200, cache_write=50)
    messages = [
        user("hello"),
        assistant("let me look", [call], usage=real),
        result(call, "x" * 401),
    ]
    assert context_tokens(messages) == 1000 + 100 + 200 + 50 + tokens_of(401)


def test_context_tokens_skips_error_and_aborted_usage() -> None:
    real = Usage(input=5000, output=10)
    messages: list[Message] = [
        user("a"),
        assistant("ok", usage=real),
        user("b" * 40),
        assistant("", usage=Usage(input=99_999, output=1), stop="error"),
        assistant("partial", usage=Usage(input=88_888, output=1), stop="aborted"),
    ]
    after = tokens_of(40) + 0 + tokens_of(len("partial"))
    assert context_tokens(messages) == 5010 + after


def test_context_tokens_accepts_estimated_usage_of_a_completed_message() -> None:
    # The provider layer estimates usage (system prompt and tools included) when none is
    # reported; that is still the best figure for what the request held.
    guess = Usage(input=7_000, output=20, estimated=True)
    messages = [user("a"), assistant("ok", usage=Usage(input=5000)), assistant("x", usage=guess)]
    assert context_tokens(messages) == 7_020


def test_context_tokens_estimates_everything_without_real_usage() -> None:
    call = ToolCall("c1", "bash", {"command": "ls"})
    image = UserMessage([TextContent("look"), ImageContent("AAAA", "image/png")])
    messages = [image, assistant("hm", [call]), result(call, "y" * 100)]
    call_chars = len("bash") + len('{"command": "ls"}')
    expected = tokens_of(4 + 4800) + tokens_of(2 + call_chars) + tokens_of(100)
    assert context_tokens(messages) == expected


def test_context_tokens_ignores_usage_from_before_a_compaction() -> None:
    kept = assistant("kept reply", usage=Usage(input=150_000, output=100))
    summary = compaction_summary_message("what happened before", next(_clock))
    messages = [summary, kept, user("next")]
    expected = tokens_of(len(summary.text)) + tokens_of(len("kept reply")) + tokens_of(4)
    assert context_tokens(messages) == expected
    after = assistant("new reply", usage=Usage(input=3_000, output=50))
    assert context_tokens([*messages, after, user("more")]) == 3_050 + tokens_of(4)


def test_should_compact_threshold() -> None:
    assert not should_compact(100_000, 128_000, 28_000)
    assert should_compact(100_001, 128_000, 28_000)


# --- cut point -----------------------------------------------------------------------------


def generate_conversation(rng: random.Random) -> list[Message]:
    ids = itertools.count()
    messages: list[Message] = []
    for _ in range(rng.randint(1, 7)):
        messages.append(user("u" * rng.randint(1, 3000)))
        for _step in range(rng.randint(1, 5)):
            calls = [
                ToolCall(f"c{next(ids)}", rng.choice(["read", "edit", "bash"]), {"path": "p"})
                for _ in range(rng.choice([0, 1, 1, 2, 3]))
            ]
            messages.append(assistant("a" * rng.randint(0, 1500), calls))
            order = list(calls)
            rng.shuffle(order)  # results may arrive in any order
            results: list[Message] = [result(call, "r" * rng.randint(0, 6000)) for call in order]
            if len(results) > 1 and rng.random() < 0.3:
                # a user message landing between results must not become a cut point
                results.insert(rng.randint(1, len(results) - 1), user("note " * 30))
            messages.extend(results)
            if calls and rng.random() < 0.15:
                messages.append(user("steering " * rng.randint(1, 20)))
            if not calls:
                break
    return messages


def kept_tail_is_consistent(messages: Sequence[Message], cut: int) -> bool:
    """Every tool result in the kept tail has its call in the kept tail too."""
    kept = messages[cut:]
    calls = {c.id for m in kept if isinstance(m, AssistantMessage) for c in m.tool_calls}
    return all(m.tool_call_id in calls for m in kept if isinstance(m, ToolResultMessage))


def oracle_cut(messages: Sequence[Message], keep: int) -> int | None:
    """The documented rule, with cut validity judged by the tail's consistency alone."""
    suffix = 0
    threshold = None
    for index in range(len(messages) - 1, -1, -1):
        suffix += estimate_message_tokens(messages[index])
        if suffix >= keep:
            threshold = index
            break
    if threshold is None or len(messages) < 2:
        return None

    def valid(j: int) -> bool:
        message = messages[j]
        boundary = isinstance(message, UserMessage | AssistantMessage)
        return boundary and kept_tail_is_consistent(messages, j)

    after = [j for j in range(max(threshold, 1), len(messages)) if valid(j)]
    if after:
        return after[0]
    before = [j for j in range(threshold - 1, 0, -1) if valid(j)]
    return before[0] if before else None


@pytest.mark.parametrize("seed", range(300))
def test_cut_never_separates_a_tool_call_from_its_results(seed: int) -> None:
    rng = random.Random(seed)
    messages = generate_conversation(rng)
    keep = rng.choice([0, 500, 2000, 5000, 20_000])
    cut = find_cut_index(messages, keep)
    assert cut == oracle_cut(messages, keep)
    if cut is not None:
        assert 0 < cut < len(messages)
        assert isinstance(messages[cut], UserMessage | AssistantMessage)
        assert kept_tail_is_consistent(messages, cut)


def test_cut_keeps_about_the_recent_budget() -> None:
    turns: list[Message] = []
    for index in range(10):
        turns.append(user(f"question {index} " + "q" * 3996))  # ~1000 tokens each
        turns.append(assistant("answer " + "a" * 3993))
    cut = find_cut_index(turns, keep_recent_tokens=3000)
    assert cut == 17  # the last three messages hold ~3000 tokens; 17 is an assistant message
    assert find_cut_index(turns, keep_recent_tokens=10**9) is None


def test_cut_falls_back_before_a_turn_bigger_than_the_budget() -> None:
    call = ToolCall("c1", "read", {"path": "huge.txt"})
    messages = [
        user("first"),
        assistant("done"),
        user("read the huge file"),
        assistant("", [call]),
        result(call, "z" * 400_000),
    ]
    # The tail reaches the budget inside the tool result: cutting there would orphan it.
    assert find_cut_index(messages, keep_recent_tokens=1000) == 3


def test_an_earlier_summary_is_never_summarised_alone() -> None:
    summary = compaction_summary_message("s" * 400, next(_clock))
    messages = [summary, user("q" * 4000), assistant("a" * 4000)]
    assert find_cut_index(messages, keep_recent_tokens=1000) == 2
    assert find_cut_index([summary, user("q" * 4000)], keep_recent_tokens=10) is None


def test_nothing_to_cut_in_a_short_conversation() -> None:
    assert find_cut_index([], 10) is None
    assert find_cut_index([user("hi")], 0) is None


# --- file operations -----------------------------------------------------------------------


def test_file_operations_are_cumulative_and_deduplicated() -> None:
    calls = [
        ToolCall("1", "read", {"path": "src/a.py"}),
        ToolCall("2", "edit", {"path": "src/b.py", "old_text": "x", "new_text": "y"}),
        ToolCall("3", "read", {"path": "old.py"}),
        ToolCall("4", "write", {"path": "new.py", "content": ""}),
        ToolCall("5", "bash", {"command": "cat c.py"}),
        ToolCall("6", "read", {"path": 42}),
    ]
    messages = [assistant("", calls)]
    read, modified = file_operations(messages, (["old.py", "prev.py"], ["src/b.py"]))
    assert read == ["old.py", "prev.py", "src/a.py"]
    assert modified == ["src/b.py", "new.py"]
    assert file_operations([]) == ([], [])


# --- summarising ---------------------------------------------------------------------------


def test_serialization_labels_roles_and_truncates_bulk() -> None:
    call = ToolCall("c1", "write", {"path": "big.txt", "content": "w" * 5000})
    messages = [
        user("please write"),
        assistant("sure", [call]),
        result(call, "R" * (TOOL_RESULT_LIMIT * 3), error=True),
    ]
    text = serialize_for_summary(messages)
    assert "[User]: please write" in text
    assert "[Assistant]: sure" in text
    assert '[Assistant tool call]: write({"path": "big.txt"' in text
    assert "w" * 5000 not in text
    assert "[Tool result: write (error)]: " in text
    assert "R" * TOOL_RESULT_LIMIT in text
    assert "R" * (TOOL_RESULT_LIMIT + 1) not in text
    assert f"[{TOOL_RESULT_LIMIT * 2} more characters]" in text


def run_summarize(provider: FauxProvider, messages: Sequence[Message], **kwargs: object) -> str:
    async def go() -> str:
        text, _reply = await asyncio.wait_for(
            summarize(provider.model, messages, **kwargs),  # type: ignore[arg-type]
            10,
        )
        return text

    return asyncio.run(go())


def test_summarize_sends_conversation_previous_summary_and_instructions() -> None:
    provider = FauxProvider([text_turn("## Goal\nShip the parser.")])
    try:
        messages = [user("Please fix the tokenizer bug in lexer.py"), assistant("On it.")]
        summary = run_summarize(
            provider,
            messages,
            previous_summary="Earlier: set up the repo.",
            instructions="focus on the parser",
            options=StreamOptions(api_key="k-123"),
        )
        assert summary == "## Goal\nShip the parser."
        request = provider.last_request
        assert request.options.api_key == "k-123"
        assert request.system_prompt and "summar" in request.system_prompt.lower()
        assert len(request.messages) == 1
        sent = request.messages[0]
        assert isinstance(sent, UserMessage)
        assert serialize_for_summary(messages) in sent.text
        assert "<previous-summary>\nEarlier: set up the repo.\n</previous-summary>" in sent.text
        assert "focus on the parser" in sent.text
        assert "## Next Steps" in sent.text
    finally:
        provider.close()


def test_summarize_without_previous_summary_or_instructions() -> None:
    provider = FauxProvider([text_turn("summary")])
    try:
        run_summarize(
            provider,
            [user("hi")],
            previous_summary=None,
            instructions=None,
            options=StreamOptions(),
        )
        sent = provider.last_request.messages[0]
        assert isinstance(sent, UserMessage)
        assert "<previous-summary>" not in sent.text
        assert "Additional instructions" not in sent.text
    finally:
        provider.close()


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        (FauxTurn(error="overloaded_error: try later", error_before_stream=True), "overloaded"),
        (text_turn("   "), "no text"),
    ],
)
def test_summarize_failures_raise_compaction_error(turn: FauxTurn, expected: str) -> None:
    provider = FauxProvider([turn])
    try:
        with pytest.raises(CompactionError, match=expected):
            run_summarize(
                provider,
                [user("hi")],
                previous_summary=None,
                instructions=None,
                options=StreamOptions(),
            )
    finally:
        provider.close()


def test_summarize_abort_raises_compaction_error() -> None:
    provider = FauxProvider([FauxTurn(hang=True)])

    async def go() -> None:
        controller = AbortController()
        task = asyncio.ensure_future(
            summarize(
                provider.model,
                [user("hi")],
                previous_summary=None,
                instructions=None,
                options=StreamOptions(signal=controller.signal),
            )
        )
        await asyncio.wait_for(provider.request_seen.wait(), 5)
        controller.abort("user")
        with pytest.raises(CompactionError, match="aborted"):
            await asyncio.wait_for(task, 5)

    try:
        asyncio.run(go())
    finally:
        provider.close()


def test_nothing_to_compact_says_why_and_offers_a_tail_that_cuts() -> None:
    messages: list[Message] = []
    for turn in range(4):
        messages += [user(f"question {turn} " * 100), assistant("answer " * 1000)]
    assert find_cut_index(messages, 20_000) is None  # all of it fits the default tail
    keep = smaller_tail(messages)
    assert keep is not None and keep % 100 == 0
    cut = find_cut_index(messages, keep)
    assert cut is not None and cut > 0  # the offer works
    text = nothing_to_compact(messages, 20_000)
    total = sum(estimate_message_tokens(m) for m in messages)
    assert "the last ~20,000 tokens are kept verbatim" in text
    assert f"the conversation is ~{total:,} tokens" in text
    assert f"/compact --keep {keep} " in text


def test_nothing_to_compact_with_a_single_turn_says_there_is_nothing_earlier() -> None:
    messages: list[Message] = [user("hello"), assistant("hi")]
    assert smaller_tail(messages) is None
    assert "no earlier turn to summarise" in nothing_to_compact(messages, 20_000)
