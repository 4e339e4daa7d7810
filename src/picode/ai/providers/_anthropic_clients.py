"""Anthropic's models on Amazon Bedrock and Google Vertex AI, through the anthropic SDK's own
clients (``AsyncAnthropicBedrock``, ``AsyncAnthropicVertex``): the request body and stream
are the Messages API's, only the URL and the signing differ.

Auth paths that need no extra package come first: a Bedrock API key
(``AWS_BEARER_TOKEN_BEDROCK``, sent as a bearer token) and a Vertex access token
(``ANTHROPIC_VERTEX_ACCESS_TOKEN``). Without them Bedrock signs with boto3 (SigV4) and Vertex
logs in with google-auth's application default credentials.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from typing import Any

from anthropic import Timeout

from picode.ai.errors import ProviderSetupError
from picode.ai.providers._asyncio_net import use_asyncio_streams
from picode.ai.providers._client import ClientSettings

BEDROCK_EXTRA = "pip install 'picode[bedrock]'"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


def make_client(
    variant: str, settings: ClientSettings, env: Mapping[str, str] | None = None
) -> Any:
    """An ``AsyncAnthropicBedrock`` or ``AsyncAnthropicVertex``: not subclasses of
    ``AsyncAnthropic``, but the same ``messages`` API."""
    environ = os.environ if env is None else env
    common: dict[str, Any] = {
        "max_retries": 0,
        "timeout": Timeout(settings.idle_timeout_s, connect=settings.connect_timeout_s),
        "default_headers": settings.headers,
    }
    if settings.base_url:
        common["base_url"] = settings.base_url
    if variant == "bedrock":
        client = _bedrock(settings, environ, common)
    elif variant == "vertex":
        client = _vertex(settings, environ, common)
    else:
        raise ProviderSetupError(f"unknown Anthropic client '{variant}' (known: bedrock, vertex)")
    use_asyncio_streams(client)
    return client


def _first(environ: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def module_missing(name: str) -> bool:
    return importlib.util.find_spec(name) is None


def _bedrock(settings: ClientSettings, environ: Mapping[str, str], common: dict[str, Any]) -> Any:
    # Bedrock streams AWS's binary event-stream framing, which the SDK decodes with botocore
    # whatever the auth: without it the reply could not be read, so nothing is sent.
    if module_missing("botocore"):
        raise ProviderSetupError(
            "bedrock needs boto3 (the SDK reads Bedrock's event stream with botocore): "
            f"{BEDROCK_EXTRA}"
        )
    from anthropic import AsyncAnthropicBedrock

    region = _first(environ, "AWS_REGION", "AWS_DEFAULT_REGION")
    profile = _first(environ, "AWS_PROFILE")
    if region is None and settings.base_url is None and profile is None:
        raise ProviderSetupError(
            "bedrock needs a region: set AWS_REGION (e.g. export AWS_REGION=us-east-1)"
        )
    if settings.api_key:
        # A Bedrock API key goes as a bearer token; AWS credentials must not be passed too.
        return AsyncAnthropicBedrock(
            api_key=settings.api_key, aws_region=region or "us-east-1", **common
        )
    if module_missing("boto3"):
        raise ProviderSetupError(
            "bedrock has no API key (AWS_BEARER_TOKEN_BEDROCK) and signing with AWS "
            f"credentials needs boto3: {BEDROCK_EXTRA}"
        )
    return AsyncAnthropicBedrock(aws_region=region, aws_profile=profile, **common)


def _vertex(settings: ClientSettings, environ: Mapping[str, str], common: dict[str, Any]) -> Any:
    from anthropic import AsyncAnthropicVertex

    region = _first(environ, "CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION")
    if region is None:
        raise ProviderSetupError(
            "vertex needs a region: set CLOUD_ML_REGION (e.g. export CLOUD_ML_REGION=global)"
        )
    project = _first(environ, "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT")
    kwargs: dict[str, Any] = {"region": region, **common}
    if settings.api_key:
        kwargs["access_token"] = settings.api_key
    else:
        kwargs["credentials"], project = _google_login(project)
    if project is None:
        raise ProviderSetupError("vertex needs a project: set ANTHROPIC_VERTEX_PROJECT_ID")
    kwargs["project_id"] = project
    return AsyncAnthropicVertex(**kwargs)


def _google_login(project: str | None) -> tuple[Any, str | None]:
    """Google's application default credentials, looked up now (this runs in a worker
    thread) so that a machine without them hears what to do before any request."""
    if module_missing("google.auth"):
        raise ProviderSetupError(
            "vertex has no access token (ANTHROPIC_VERTEX_ACCESS_TOKEN) and Google's login "
            "needs google-auth: pip install 'picode[vertex]'"
        )
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        credentials, found = google.auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
    except DefaultCredentialsError:
        raise ProviderSetupError(
            "vertex has no access token and Google's default login found no credentials: "
            "set ANTHROPIC_VERTEX_ACCESS_TOKEN (e.g. from gcloud auth print-access-token) or "
            "run gcloud auth application-default login"
        ) from None
    return credentials, project or found
