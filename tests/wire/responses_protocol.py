"""OpenAI Responses API streams, written the way the service writes them.

Every event is ``event: <type>`` plus ``data: {... "type": <type>, "sequence_number": n}``.
A ``ResponsesStream`` collects items as a test adds them (each with its full life cycle:
``output_item.added``, part events, deltas, ``.done`` events, ``output_item.done``) and the
terminal ``response.completed`` / ``incomplete`` / ``failed`` event carries the finished
output list and usage, like the real thing. Raw chunks (``Pause``, ``Cut``, ``Stall``, bad
bytes) can be slipped in anywhere.
"""

from __future__ import annotations

from typing import Any

from tests.wire.server import Chunk, WireResponse, sse


def usage(
    input_tokens: int = 0, output_tokens: int = 0, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


class ResponsesStream:
    def __init__(self, response_id: str = "resp_test", model: str = "gpt-test") -> None:
        self.response_id = response_id
        self.model = model
        self.chunks: list[Chunk] = []
        self.output: list[dict[str, Any]] = []
        self._sequence = 0

    # --- raw --------------------------------------------------------------------------

    def event(self, event_type: str, **fields: Any) -> ResponsesStream:
        payload = {"type": event_type, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        self.chunks.append(sse(event_type, payload))
        return self

    def raw(self, *chunks: Chunk) -> ResponsesStream:
        self.chunks.extend(chunks)
        return self

    def response(self, status: int = 200) -> WireResponse:
        return WireResponse(status=status, body=list(self.chunks))

    def snapshot(self, status: str, **extra: Any) -> dict[str, Any]:
        """The Response object as the service embeds it in lifecycle events."""
        body: dict[str, Any] = {
            "id": self.response_id,
            "object": "response",
            "created_at": 1_700_000_000,
            "status": status,
            "model": self.model,
            "output": list(self.output) if status != "in_progress" else [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
            "usage": None,
        }
        body.update(extra)
        return body

    # --- life cycle -------------------------------------------------------------------

    def created(self) -> ResponsesStream:
        self.event("response.created", response=self.snapshot("in_progress"))
        return self.event("response.in_progress", response=self.snapshot("in_progress"))

    def completed(self, usage_: dict[str, Any] | None = None) -> ResponsesStream:
        return self.event("response.completed", response=self.snapshot("completed", usage=usage_))

    def incomplete(
        self, reason: str = "max_output_tokens", usage_: dict[str, Any] | None = None
    ) -> ResponsesStream:
        snapshot = self.snapshot("incomplete", usage=usage_, incomplete_details={"reason": reason})
        return self.event("response.incomplete", response=snapshot)

    def failed(self, code: str, message: str) -> ResponsesStream:
        snapshot = self.snapshot("failed", error={"code": code, "message": message})
        return self.event("response.failed", response=snapshot)

    def error(self, code: str, message: str) -> ResponsesStream:
        """The flat ``error`` event: code and message at the top level."""
        return self.event("error", code=code, message=message, param=None)

    def nested_error(self, code: str, message: str, kind: str = "server_error") -> ResponsesStream:
        """The ``error`` event whose details sit in an ``error`` object."""
        return self.event("error", error={"type": kind, "code": code, "message": message})

    # --- items ------------------------------------------------------------------------

    def reasoning(
        self,
        summary: list[list[str]],
        item_id: str = "rs_1",
        encrypted: str | None = "gAAAA-encrypted",
        with_deltas: bool = True,
    ) -> ResponsesStream:
        """A reasoning item; ``summary`` is a list of parts, each a list of deltas."""
        index = len(self.output)
        added: dict[str, Any] = {
            "id": item_id,
            "type": "reasoning",
            "summary": [],
            "encrypted_content": None,
        }
        self.event("response.output_item.added", output_index=index, item=added)
        for part_index, deltas in enumerate(summary):
            text = "".join(deltas)
            common = {"item_id": item_id, "output_index": index, "summary_index": part_index}
            self.event(
                "response.reasoning_summary_part.added",
                **common,
                part={"type": "summary_text", "text": ""},
            )
            if with_deltas:
                for delta in deltas:
                    self.event("response.reasoning_summary_text.delta", **common, delta=delta)
            self.event("response.reasoning_summary_text.done", **common, text=text)
            self.event(
                "response.reasoning_summary_part.done",
                **common,
                part={"type": "summary_text", "text": text},
            )
        item = {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "".join(d)} for d in summary],
            "encrypted_content": encrypted,
        }
        self.output.append(item)
        return self.event("response.output_item.done", output_index=index, item=item)

    def message(
        self,
        deltas: list[str],
        item_id: str = "msg_1",
        refusal: bool = False,
        with_deltas: bool = True,
        stop_after_deltas: bool = False,
    ) -> ResponsesStream:
        """An assistant message with one output_text (or refusal) part."""
        index = len(self.output)
        added = {
            "id": item_id,
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        self.event("response.output_item.added", output_index=index, item=added)
        common = {"item_id": item_id, "output_index": index, "content_index": 0}
        empty: dict[str, Any] = (
            {"type": "refusal", "refusal": ""}
            if refusal
            else {"type": "output_text", "text": "", "annotations": []}
        )
        self.event("response.content_part.added", **common, part=empty)
        if with_deltas:
            for delta in deltas:
                if refusal:
                    self.event("response.refusal.delta", **common, delta=delta)
                else:
                    self.event("response.output_text.delta", **common, delta=delta, logprobs=[])
        if stop_after_deltas:
            return self
        text = "".join(deltas)
        if refusal:
            self.event("response.refusal.done", **common, refusal=text)
            part: dict[str, Any] = {"type": "refusal", "refusal": text}
        else:
            self.event("response.output_text.done", **common, text=text, logprobs=[])
            part = {"type": "output_text", "text": text, "annotations": []}
        self.event("response.content_part.done", **common, part=part)
        item = {**added, "status": "completed", "content": [part]}
        self.output.append(item)
        return self.event("response.output_item.done", output_index=index, item=item)

    def function_call(
        self,
        name: str,
        arguments: list[str],
        call_id: str = "call_1",
        item_id: str = "fc_1",
        with_deltas: bool = True,
        done_event: bool = True,
        item_arguments: bool = True,
    ) -> ResponsesStream:
        """A function call whose arguments stream as ``arguments`` deltas.

        The switches drop parts of the life cycle, as some servers do: the deltas, the
        ``function_call_arguments.done`` event, the arguments of the finished item.
        """
        index = len(self.output)
        added = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        self.event("response.output_item.added", output_index=index, item=added)
        common = {"item_id": item_id, "output_index": index}
        text = "".join(arguments)
        if with_deltas:
            for delta in arguments:
                self.event("response.function_call_arguments.delta", **common, delta=delta)
        if done_event:
            self.event("response.function_call_arguments.done", **common, arguments=text)
        item = {**added, "status": "completed", "arguments": text if item_arguments else ""}
        self.output.append(item)
        return self.event("response.output_item.done", output_index=index, item=item)
