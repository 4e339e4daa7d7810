"""One SSL context for a ``google-genai`` client instead of two, and its async HTTP client
on asyncio's streams."""

from __future__ import annotations

import ssl

from google.genai import _api_client as google_api_client
from google.genai import types

from picode.ai.providers._asyncio_net import asyncio_transport, environment_proxy_mounts


def one_ssl_context(options: types.HttpOptions) -> types.HttpOptions:
    """``options`` handing the HTTP clients' SSL context to the websocket side too, and
    giving the async client a transport that reads through asyncio's own streams
    (``_asyncio_net``; with a transport of its own the SDK's client keeps no pool per event
    loop, which picode's client cache already does), and the proxies of the environment,
    which httpx2 leaves out for a client given its transport.

    A client builds two contexts, each loading the CA bundle (~25-35 ms of CPU each): one
    for HTTP and one for the Live API's websockets, which picode never opens. The HTTP one
    is built here by the SDK's own rule (``SSL_CERT_FILE``/``SSL_CERT_DIR``, else its HTTP
    library's default) and given to both; should that rule move, the options stay as they
    are and the SDK builds both as before."""
    ensure = getattr(google_api_client.BaseApiClient, "_ensure_httpx_ssl_ctx", None)
    if ensure is None or options.client_args or options.async_client_args:
        return options
    try:
        _, async_args = ensure(options)
    except Exception:  # the SDK reports a broken trust store itself, as before
        return options
    context = async_args.get("verify")
    if not isinstance(context, ssl.SSLContext):
        return options
    return options.model_copy(
        update={
            "client_args": {"verify": context},
            # ``ssl``: the websockets' context; the HTTP client drops what it does not take.
            "async_client_args": {
                "verify": context,
                "ssl": context,
                "transport": asyncio_transport(context),
                "mounts": environment_proxy_mounts(context),
            },
        }
    )
