"""A server's prompts and resources (docs/mcp.md "Prompts and resources").

Prompts become slash commands: ``/mcp__<server>__<prompt> args`` is sent as the text the
server's ``prompts/get`` returns. Resources are attached to a message as ``@<server>:<uri>``:
their text (or image) follows it, as an attached file's would.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from mcp import ClientSession, types

from picode.agent.file_blocks import image_file_note, text_file_block
from picode.ai.types import ImageContent, UserContent
from picode.session.mcp.content import IMAGE_TYPES
from picode.session.mcp.status import (
    TOOL_PREFIX,
    TOOL_SEPARATOR,
    McpPrompt,
    McpPromptArgument,
    McpResource,
)
from picode.session.mcp.transport import every_page

#: ``@server:uri``: a server name, a colon, then a URI with a scheme (``notes://today``,
#: ``file:///a``); it ends at white space. The server name is checked against the session's.
RESOURCE_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]{1,40}):([A-Za-z][A-Za-z0-9+.-]*:\S+)")
#: Trailing punctuation a sentence puts after a mention, not part of the URI.
_TRAILING = ".,;:!?)]}'\""
#: Text of one resource at most (the limit of read).
MAX_RESOURCE_BYTES = 50 * 1024


async def list_prompts(session: ClientSession) -> list[types.Prompt]:
    return await every_page(session.list_prompts, lambda page: page.prompts)


async def list_resources(session: ClientSession) -> list[types.Resource]:
    return await every_page(session.list_resources, lambda page: page.resources)


def prompt_info(server: str, prompt: types.Prompt) -> McpPrompt:
    arguments = tuple(
        McpPromptArgument(a.name, a.description or "", bool(a.required))
        for a in prompt.arguments or ()
    )
    command = f"{TOOL_PREFIX}{server}{TOOL_SEPARATOR}{prompt.name}"
    description = prompt.description or prompt.title or ""
    return McpPrompt(command, server, prompt.name, description, arguments)


def resource_info(server: str, resource: types.Resource) -> McpResource:
    description = resource.description or resource.title or ""
    return McpResource(server, str(resource.uri), resource.name, description, resource.mime_type)


def prompt_arguments(prompt: McpPrompt, text: str) -> dict[str, str]:
    """What was typed after the command, as the prompt's arguments: ``name=value`` words
    for named ones, else the words in order (the last argument takes the rest). Quotes
    group words. Raises ``ValueError`` naming what is missing."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    names = [argument.name for argument in prompt.arguments]
    values: dict[str, str] = {}
    named = [w.partition("=") for w in words]
    if words and all(sep and key in names for key, sep, _ in named):
        values = {key: value for key, _, value in named}
    elif words:
        if not names:
            raise ValueError(f"/{prompt.command} takes no arguments")
        for name, word in zip(names, words, strict=False):
            values[name] = word
        if len(words) > len(names):
            values[names[-1]] = " ".join(words[len(names) - 1 :])
    missing = [a.name for a in prompt.arguments if a.required and not values.get(a.name)]
    if missing:
        usage = f"/{prompt.command} {prompt.usage}".rstrip()
        raise ValueError(f"/{prompt.command} needs {', '.join(missing)} (usage: {usage})")
    return values


def prompt_text(result: types.GetPromptResult) -> str:
    """The prompt's messages as one message from the person. Several roles are labelled,
    so an example exchange the server wrote stays readable."""
    roles = {message.role for message in result.messages}
    parts: list[str] = []
    for message in result.messages:
        text = _content_text(message.content)
        parts.append(f"[{message.role}]\n{text}" if len(roles) > 1 else text)
    return "\n\n".join(parts)


def _content_text(content: types.ContentBlock) -> str:
    if isinstance(content, types.TextContent):
        return content.text
    if isinstance(content, types.EmbeddedResource):
        resource = content.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource <{resource.uri}>]\n{resource.text}"
        return f"[resource <{resource.uri}>: {resource.mime_type or 'binary'}, not included]"
    if isinstance(content, types.ResourceLink):
        return f"[resource link: {content.name} <{content.uri}>]"
    kind = getattr(content, "type", "?")
    mime = getattr(content, "mime_type", "")
    return f"[{kind} ({mime}) in the prompt, not included]"


def resource_mentions(text: str, servers: Sequence[str]) -> list[tuple[str, str]]:
    """The ``(server, uri)`` pairs ``text`` mentions, each once, for known servers only."""
    found: list[tuple[str, str]] = []
    for match in RESOURCE_MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(_TRAILING)
        if server in servers and (server, uri) not in found:
            found.append((server, uri))
    return found


def resource_blocks(server: str, uri: str, result: types.ReadResourceResult) -> list[UserContent]:
    """A read resource as an attached file's blocks (agent/file_blocks.py), named
    ``server:uri``: every front end shows it as "attached: …"."""
    blocks: list[UserContent] = []
    for item in result.contents:
        shown = f"{server}:{item.uri}"
        if isinstance(item, types.TextResourceContents):
            blocks.append(_text_block(shown, item.text))
        elif (item.mime_type or "") in IMAGE_TYPES:
            size = f"{len(item.blob) * 3 // 4 / 1024:.1f}KB"
            blocks.append(image_file_note(shown, item.mime_type or "", size))
            blocks.append(ImageContent(item.blob, item.mime_type or ""))
        else:
            mime = item.mime_type or "application/octet-stream"
            blocks.append(text_file_block(shown, 1, None, f"[{mime}: not text, not included]"))
    if not blocks:
        blocks.append(text_file_block(f"{server}:{uri}", 0, None, ""))
    return blocks


def _text_block(shown: str, text: str) -> UserContent:
    lines = text.split("\n")
    encoded = text.encode("utf-8", "replace")
    if len(encoded) <= MAX_RESOURCE_BYTES:
        return text_file_block(shown, len(lines), None, text)
    head = encoded[:MAX_RESOURCE_BYTES].decode("utf-8", "ignore").split("\n")
    kept = head[:-1] or head
    return text_file_block(shown, len(lines), len(kept), "\n".join(kept))
