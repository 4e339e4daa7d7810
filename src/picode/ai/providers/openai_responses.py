"""The ``openai-responses`` provider: OpenAI's Responses API through the official SDK.

The request goes out through the SDK's client (auth, headers, retries off, timeouts and
HTTP errors are the SDK's), but its events are read off the response by picode as the
JSON the service sent (``_openai_post``): the SDK's typed events are a union of ~100
pydantic models whose validators take 0.3-0.4 s to build on first use, which a person
typing at once after launch would wait for. The raw stream is mapped output item by
output item onto the builder, dispatched on the ``type`` string; events of a type this
code does not know are ignored.

Requests are stateless (``store=False``): reasoning items come back with their
``encrypted_content`` and are kept, as JSON, in the thinking block's signature so the next
request can replay them verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openai import APIError, AsyncOpenAI, Timeout

from picode.ai.builder import MessageBuilder
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.partial_json import parse_streaming_json
from picode.ai.providers._asyncio_net import use_asyncio_streams
from picode.ai.providers._client import client_settings
from picode.ai.providers._client_cache import cached_client_async
from picode.ai.providers._convert import object_schema
from picode.ai.providers._openai_post import post_stream, read_events
from picode.ai.providers._openai_responses_history import convert_input
from picode.ai.thinking import thinking_request
from picode.ai.types import Context, TextContent, ThinkingContent

API = "openai-responses"
SUMMARY_SEPARATOR = "\n\n"
Json = dict[str, Any]


async def produce(
    model: Model, context: Context, options: StreamOptions, out: MessageBuilder
) -> None:
    client = await _client(model, options)
    # Encoded by picode, each event read as the decoded JSON (``_openai_post``).
    stream = await post_stream(client, "/responses", build_params(model, context, options))
    state = _StreamState(out)
    async with stream:
        try:
            # A terminal event ends the reading: nothing after it matters, and waiting
            # for the server to close the body would only delay the turn.
            await read_events(stream, state.handle)
        except APIError as exc:
            # A bare APIError is an ``error`` event shaped {"error": {...}} (see
            # ``read_events``); word it like the flat shape.
            if type(exc) is not APIError or not isinstance(exc.body, dict):
                raise
            out.fail(error_text(exc.body))


async def prepare(model: Model, options: StreamOptions) -> None:
    """Build the client ahead of the first request (see ``picode.ai.stream.prepare_provider``)."""
    await _client(model, options)


async def _client(model: Model, options: StreamOptions) -> AsyncOpenAI:
    settings = client_settings(model, options)

    def make() -> AsyncOpenAI:
        client = AsyncOpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url,
            max_retries=0,
            timeout=Timeout(settings.idle_timeout_s, connect=settings.connect_timeout_s),
            default_headers=settings.headers,
        )
        use_asyncio_streams(client)
        return client

    return await cached_client_async(settings.cache_key(API), make, AsyncOpenAI.close)


def error_text(error: object) -> str:
    """``code: message`` from an error object, nested (``{"error": {...}}``) or flat."""
    if isinstance(error, str) and error.strip():
        return error.strip()
    if not isinstance(error, dict):
        return "The server reported an error"
    nested = error.get("error")
    if isinstance(nested, dict):
        error = nested
    code, message = error.get("code"), error.get("message")
    message = str(message).strip() if message else ""
    if code and message:
        return f"{code}: {message}"
    return message or (str(code) if code else "The server reported an error")


# --- request ---------------------------------------------------------------------------


def build_params(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """Keyword arguments for ``responses.create`` (without ``stream``)."""
    params: dict[str, Any] = {
        "model": model.id,
        "input": convert_input(context, model),
        "store": False,
        "max_output_tokens": options.resolved_max_tokens(model),
    }
    if context.system_prompt:
        params["instructions"] = context.system_prompt
    if options.temperature is not None:
        params["temperature"] = options.temperature
    if context.tools:
        params["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": object_schema(tool.parameters),
                # picode's schemas are ordinary JSON Schema, not the strict subset.
                "strict": False,
            }
            for tool in context.tools
        ]
    request = thinking_request(model, options.thinking)
    if request.value == "none":
        params["reasoning"] = {"effort": "none"}
    elif request.value is not None:
        params["reasoning"] = {"effort": request.value, "summary": "auto"}
    if model.reasoning:
        # Without stored responses, reasoning survives a turn only as encrypted content.
        params["include"] = ["reasoning.encrypted_content"]
    if options.session_id:
        params["prompt_cache_key"] = options.session_id
    return params


def reasoning_signature(item: Json) -> str | None:
    """A finished reasoning item as the JSON kept in ``thinking_signature``."""
    item_id = item.get("id")
    if not item_id:
        return None
    summary = [
        {"type": "summary_text", "text": _text(part, "text")} for part in _dicts(item, "summary")
    ]
    stored = {
        "type": "reasoning",
        "id": item_id,
        "summary": summary,
        "encrypted_content": item.get("encrypted_content"),
    }
    return json.dumps(stored, ensure_ascii=False)


# --- response --------------------------------------------------------------------------
# Events are the service's JSON: any field may be missing or of another type, and a wrong
# one is treated as missing rather than trusted.


def _dict(value: Json, key: str) -> Json:
    found = value.get(key)
    return found if isinstance(found, dict) else {}


def _dicts(value: Json, key: str) -> list[Json]:
    found = value.get(key)
    return [part for part in found if isinstance(part, dict)] if isinstance(found, list) else []


def _text(value: Json, key: str) -> str:
    found = value.get(key)
    return found if isinstance(found, str) else ""


def _int(value: Json, key: str, default: int) -> int:
    found = value.get(key)
    return found if isinstance(found, int) and not isinstance(found, bool) else default


def _message_text(item: Json) -> str:
    """All text of a finished message item (output text and refusals)."""
    return "".join(
        _text(part, "text") or _text(part, "refusal") for part in _dicts(item, "content")
    )


@dataclass(slots=True)
class _Item:
    """One output item being streamed: which picode block it feeds and what arrived."""

    kind: str  # "thinking" | "text" | "toolCall"
    index: int
    summary_index: int = -1
    #: Content parts (text) that received deltas; a ``.done`` for any other fills it in.
    parts_with_deltas: set[int] = field(default_factory=set)
    arguments_streamed: bool = False
    done_arguments: str | None = None


class _StreamState:
    """Maps one response's raw events onto the builder."""

    __slots__ = ("handlers", "items", "out")

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        #: output_index -> item; items of kinds we do not map are absent.
        self.items: dict[int, _Item] = {}
        self.handlers: dict[str, Callable[[Json], bool | None]] = {
            "response.created": self._created,
            "response.in_progress": self._created,
            "response.queued": self._created,
            "response.output_item.added": self._item_added,
            "response.reasoning_summary_text.delta": self._summary_delta,
            "response.reasoning_summary_text.done": self._summary_done,
            "response.reasoning_text.delta": self._reasoning_text_delta,
            "response.output_text.delta": self._text_delta,
            "response.refusal.delta": self._text_delta,
            "response.output_text.done": self._text_done,
            "response.refusal.done": self._refusal_done,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.function_call_arguments.done": self._arguments_done,
            "response.output_item.done": self._item_done,
            "response.completed": self._terminal,
            "response.incomplete": self._terminal,
            "response.failed": self._terminal,
            "response.cancelled": self._terminal,
            "error": self._error,
        }

    def handle(self, event: Json) -> bool:
        """Apply one event; True once the response has ended."""
        handler = self.handlers.get(_text(event, "type"))
        return bool(handler(event)) if handler is not None else False

    # --- items ---

    def _created(self, event: Json) -> None:
        response_id = _text(_dict(event, "response"), "id")
        if response_id:
            self.out.message.response_id = response_id
        self.out.start()

    def _item_added(self, event: Json) -> None:
        item = _dict(event, "item")
        item_type = item.get("type")
        output_index = _int(event, "output_index", -1)
        out = self.out
        if item_type == "reasoning":
            self.items[output_index] = _Item("thinking", out.thinking_start())
        elif item_type == "message":
            index = out.text_start(_text(item, "id") or None)
            self.items[output_index] = _Item("text", index)
        elif item_type == "function_call":
            item_id = _text(item, "id")
            call_id = _text(item, "call_id") or item_id
            full_id = f"{call_id}|{item_id}" if item_id and item_id != call_id else call_id
            state = _Item("toolCall", out.toolcall_start(full_id, _text(item, "name")))
            arguments = _text(item, "arguments")
            if arguments:
                state.done_arguments = arguments
            self.items[output_index] = state

    def _entry(self, event: Json, kind: str) -> _Item | None:
        entry = self.items.get(_int(event, "output_index", -1))
        return entry if entry is not None and entry.kind == kind else None

    def _summary_part(self, entry: _Item, summary_index: int) -> None:
        """Separate summary parts by a blank line, once per new part."""
        if entry.summary_index == summary_index:
            return
        entry.summary_index = summary_index
        block = self.out.message.content[entry.index]
        if isinstance(block, ThinkingContent) and block.thinking:
            self.out.thinking_delta(entry.index, SUMMARY_SEPARATOR)

    def _summary_delta(self, event: Json) -> None:
        entry = self._entry(event, "thinking")
        if entry is not None:
            self._summary_part(entry, _int(event, "summary_index", 0))
            self.out.thinking_delta(entry.index, _text(event, "delta"))

    def _summary_done(self, event: Json) -> None:
        entry = self._entry(event, "thinking")
        summary_index = _int(event, "summary_index", 0)
        if entry is not None and entry.summary_index != summary_index:
            # A part that streamed no deltas: its text arrives whole here.
            self._summary_part(entry, summary_index)
            self.out.thinking_delta(entry.index, _text(event, "text"))

    def _reasoning_text_delta(self, event: Json) -> None:
        entry = self._entry(event, "thinking")
        if entry is not None:
            self.out.thinking_delta(entry.index, _text(event, "delta"))

    def _text_delta(self, event: Json) -> None:
        entry = self._entry(event, "text")
        if entry is not None:
            entry.parts_with_deltas.add(_int(event, "content_index", 0))
            self.out.text_delta(entry.index, _text(event, "delta"))

    def _text_done(self, event: Json) -> None:
        self._part_done(event, _text(event, "text"))

    def _refusal_done(self, event: Json) -> None:
        self._part_done(event, _text(event, "refusal"))

    def _part_done(self, event: Json, text: str) -> None:
        entry = self._entry(event, "text")
        part = _int(event, "content_index", 0)
        if entry is not None and part not in entry.parts_with_deltas and text:
            entry.parts_with_deltas.add(part)
            self.out.text_delta(entry.index, text)

    def _arguments_delta(self, event: Json) -> None:
        entry = self._entry(event, "toolCall")
        delta = _text(event, "delta")
        if entry is not None and delta:
            entry.arguments_streamed = True
            self.out.toolcall_delta(entry.index, delta)

    def _arguments_done(self, event: Json) -> None:
        entry = self._entry(event, "toolCall")
        arguments = _text(event, "arguments")
        if entry is not None and arguments:
            entry.done_arguments = arguments

    def _item_done(self, event: Json) -> None:
        entry = self.items.pop(_int(event, "output_index", -1), None)
        if entry is None:
            return
        item = _dict(event, "item")
        out = self.out
        if entry.kind == "thinking":
            block = out.message.content[entry.index]
            if isinstance(block, ThinkingContent) and not block.thinking:
                texts = [_text(part, "text") for part in _dicts(item, "summary")]
                out.thinking_delta(entry.index, SUMMARY_SEPARATOR.join(t for t in texts if t))
            signature = reasoning_signature(item)
            if signature is not None:
                out.thinking_signature(entry.index, signature, append=False)
            out.thinking_end(entry.index)
        elif entry.kind == "text":
            block = out.message.content[entry.index]
            if isinstance(block, TextContent) and not block.text:
                out.text_delta(entry.index, _message_text(item))
            out.text_end(entry.index)
        elif entry.arguments_streamed:
            out.toolcall_end(entry.index)
        else:
            arguments = _text(item, "arguments") or entry.done_arguments
            out.toolcall_end(entry.index, parse_streaming_json(arguments))

    # --- endings ---

    def _terminal(self, event: Json) -> bool:
        response = _dict(event, "response")
        out = self.out
        response_id = _text(response, "id")
        if response_id:
            out.message.response_id = response_id
        self._usage(response.get("usage"))
        status = _text(response, "status") or _text(event, "type").removeprefix("response.")
        if status == "completed":
            out.finish("stop")
        elif status == "incomplete":
            reason = _dict(response, "incomplete_details").get("reason")
            if reason == "content_filter":
                out.message.error_message = "The response was stopped by the content filter"
                out.finish("error")
            else:
                out.finish("length")
        elif status == "failed":
            error = response.get("error")
            out.message.error_message = (
                error_text(error) if error is not None else "The response failed"
            )
            out.finish("error")
        elif status == "cancelled":
            out.message.error_message = "The response was cancelled by the server"
            out.finish("error")
        else:
            # A status this code does not know; the response did end, so treat it as done.
            out.finish("stop")
        return True

    def _error(self, event: Json) -> bool:
        self.out.fail(error_text(event))
        return True

    def _usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        details = _dict(usage, "input_tokens_details")
        cached = _int(details, "cached_tokens", 0)
        written = _int(details, "cache_write_tokens", 0)
        self.out.set_usage(
            input=_int(usage, "input_tokens", 0) - cached - written,
            output=_int(usage, "output_tokens", 0),
            cache_read=cached,
            cache_write=written,
        )
