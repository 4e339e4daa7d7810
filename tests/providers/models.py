"""Models, tools and past replies shared by the provider tests.

One factory makes the model of any API, pointed at the wire server; the per-API fields (id,
provider, URL path, prices) are what the tests check requests and costs against.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from picode.ai.models import Model, ModelCost
from picode.ai.types import AssistantContent, AssistantMessage, Tool
from tests.wire.server import WireServer

READ_TOOL = Tool(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)

#: A few base64 bytes standing in for an image.
PNG = "iVBORw0KGgo="

#: Per API: the path after the server URL (where the SDK expects its version prefix) and
#: the model's own fields.
_APIS: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic-messages": (
        "",
        {
            "id": "claude-test",
            "name": "Claude Test",
            "provider": "anthropic",
            "context_window": 200_000,
            "max_tokens": 8192,
            "cost": ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        },
    ),
    "openai-completions": (
        "/v1",
        {
            "id": "qwen-test",
            "name": "Qwen Test",
            "provider": "local",
            "cost": ModelCost(input=1, output=2, cache_read=0.5),
        },
    ),
    "openai-responses": (
        "/v1",
        {
            "id": "gpt-test",
            "name": "GPT test",
            "provider": "openai",
            "cost": ModelCost(input=2.0, output=8.0, cache_read=0.5),
        },
    ),
    "google-generative-ai": (
        "",
        {
            "id": "gemini-test",
            "name": "Gemini test",
            "provider": "google",
            "cost": ModelCost(input=1.0, output=4.0, cache_read=0.25),
        },
    ),
}


def wire_model(api: str, wire: WireServer, **overrides: Any) -> Model:
    """A reasoning, image-capable model of ``api`` served by ``wire``; ``overrides``
    replace any field."""
    if api not in _APIS:
        raise ValueError(f"no test model for API {api!r}; known: {', '.join(_APIS)}")
    path, fields = _APIS[api]
    return Model(
        **{
            "api": api,
            "base_url": wire.url + path,
            "reasoning": True,
            "input": ("text", "image"),
            **fields,
            **overrides,
        }
    )


def past_reply(
    model: Model, content: Sequence[AssistantContent], /, **fields: Any
) -> AssistantMessage:
    """An earlier reply of ``model`` that ended in tool calls; ``fields`` replace any
    message field (``api``, ``provider`` and ``model`` for a reply of another model)."""
    return AssistantMessage(
        **{
            "content": list(content),
            "api": model.api,
            "provider": model.provider,
            "model": model.id,
            "stop_reason": "toolUse",
            **fields,
        }
    )
