"""Anthropic on Bedrock and Vertex through the anthropic SDK's own clients: the request
reaches the test server in the shape the SDK sends (model in the path, the token as bearer,
``anthropic_version`` in the body), and what is missing is said before anything is sent."""

from __future__ import annotations

import importlib.util

import pytest

import picode.ai.providers._anthropic_clients as clients
from picode.ai.models import Model, builtin_registry
from tests.providers.sdk_streaming import TEXT, stream_once
from tests.wire.anthropic_protocol import AnthropicStream, anthropic_error
from tests.wire.bedrock_protocol import bedrock_stream
from tests.wire.server import WireServer

BEDROCK_ID = "global.anthropic.claude-sonnet-4-5-20250929-v1:0"
VERTEX_ID = "claude-sonnet-4-5@20250929"
HAS_BOTOCORE = importlib.util.find_spec("botocore") is not None
HAS_BOTO3 = importlib.util.find_spec("boto3") is not None


def platform_model(provider: str, model_id: str, wire: WireServer) -> Model:
    info = builtin_registry().providers[provider]
    return Model(id=model_id, name=model_id, api=info.api, provider=provider, base_url=wire.url)


@pytest.fixture
def platform_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "ANTHROPIC_BEDROCK_BASE_URL",
        "ANTHROPIC_VERTEX_BASE_URL",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "GOOGLE_CLOUD_PROJECT",
        "CLOUD_ML_REGION",
        "GOOGLE_CLOUD_LOCATION",
        "BEDROCK_API_KEY",
        "VERTEX_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# --- Vertex ----------------------------------------------------------------------------


def test_vertex_streams_with_an_access_token(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    platform_env.setenv("CLOUD_ML_REGION", "us-east5")
    platform_env.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
    wire.enqueue(AnthropicStream(model=VERTEX_ID).text("Hi ", "from Vertex.").stop().response())

    outcome = stream_once(platform_model("vertex", VERTEX_ID, wire), api_key="ya29.token")

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.message.text == "Hi from Vertex."
    request = wire.requests[0]
    assert request.path == (
        "/projects/my-project/locations/us-east5/publishers/anthropic/models/"
        f"{VERTEX_ID}:streamRawPredict"
    )
    assert request.headers["authorization"] == "Bearer ya29.token"
    body = request.json
    assert "model" not in body and "anthropic_version" in body  # the model is in the path
    assert body["stream"] is True and body["messages"][0]["role"] == "user"


def test_vertex_without_a_region_says_what_to_set(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    platform_env.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
    outcome = stream_once(platform_model("vertex", VERTEX_ID, wire), api_key="ya29.token")
    assert outcome.message.stop_reason == "error"
    assert "vertex needs a region: set CLOUD_ML_REGION" in (outcome.message.error_message or "")
    assert wire.requests == []


def test_vertex_token_without_a_project_says_what_to_set(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    platform_env.setenv("CLOUD_ML_REGION", "global")
    outcome = stream_once(platform_model("vertex", VERTEX_ID, wire), api_key="ya29.token")
    assert "set ANTHROPIC_VERTEX_PROJECT_ID" in (outcome.message.error_message or "")
    assert wire.requests == []


class FakeCredentials:
    """What google.auth.default returns, already holding a fresh token."""

    token = "adc-token"
    expired = False


def test_vertex_without_a_token_uses_googles_default_login(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    import google.auth

    platform_env.setenv("CLOUD_ML_REGION", "global")
    platform_env.setattr(google.auth, "default", lambda scopes: (FakeCredentials(), "adc-proj"))
    wire.enqueue(AnthropicStream(model=VERTEX_ID).text("Hi.").stop().response())

    outcome = stream_once(platform_model("vertex", VERTEX_ID, wire), api_key=None)

    assert outcome.message.text == "Hi.", outcome.message.error_message
    request = wire.requests[0]
    assert request.path.startswith("/projects/adc-proj/locations/global/")
    assert request.headers["authorization"] == "Bearer adc-token"


def test_vertex_without_a_token_or_a_login_says_both_ways_in(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def no_login(scopes: list[str]) -> tuple[object, str]:
        raise DefaultCredentialsError("Your default credentials were not found.")

    platform_env.setenv("CLOUD_ML_REGION", "global")
    platform_env.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "proj")
    platform_env.setattr(google.auth, "default", no_login)

    outcome = stream_once(platform_model("vertex", VERTEX_ID, wire), api_key=None)

    text = outcome.message.error_message or ""
    assert "set ANTHROPIC_VERTEX_ACCESS_TOKEN" in text
    assert "gcloud auth application-default login" in text
    assert wire.requests == []


# --- Bedrock ---------------------------------------------------------------------------


def test_bedrock_sends_its_api_key_as_a_bearer_token_to_the_models_path(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    # The reply is an error, which the SDK reads without botocore: the request's shape is
    # checked whether or not boto3 is installed.
    platform_env.setenv("AWS_REGION", "us-east-1")
    platform_env.setattr(clients, "module_missing", lambda name: False)
    wire.enqueue(anthropic_error(403, "permission_error", "no access to this model"))

    outcome = stream_once(platform_model("bedrock", BEDROCK_ID, wire), api_key="bedrock-key")

    assert outcome.message.stop_reason == "error"
    assert (outcome.message.error_message or "").startswith("403")
    request = wire.requests[0]
    assert request.path == f"/model/{BEDROCK_ID}/invoke-with-response-stream"
    assert request.headers["authorization"] == "Bearer bedrock-key"
    body = request.json
    assert "model" not in body and "anthropic_version" in body
    assert "stream" not in body  # the path says it


@pytest.mark.skipif(not HAS_BOTOCORE, reason="reading Bedrock's event stream needs botocore")
def test_bedrock_streams_a_reply_in_aws_event_stream_framing(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    platform_env.setenv("AWS_REGION", "us-east-1")
    wire.enqueue(bedrock_stream(AnthropicStream(model=BEDROCK_ID).text("Hi ", "from AWS.").stop()))

    outcome = stream_once(platform_model("bedrock", BEDROCK_ID, wire), api_key="bedrock-key")

    assert outcome.shape == ["start", *TEXT, "done"], outcome.message.error_message
    assert outcome.message.text == "Hi from AWS."


@pytest.mark.skipif(not HAS_BOTO3, reason="signing with AWS credentials needs boto3")
def test_bedrock_without_a_key_signs_with_aws_credentials(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    platform_env.setenv("AWS_REGION", "eu-west-1")
    platform_env.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    platform_env.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    wire.enqueue(bedrock_stream(AnthropicStream(model=BEDROCK_ID).text("Signed.").stop()))

    outcome = stream_once(platform_model("bedrock", BEDROCK_ID, wire), api_key=None)

    assert outcome.message.text == "Signed.", outcome.message.error_message
    authorization = wire.requests[0].headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/bedrock/aws4_request" in authorization


def test_bedrock_without_botocore_names_the_extra_and_sends_nothing(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    platform_env.setenv("AWS_REGION", "us-east-1")
    platform_env.setattr(clients, "module_missing", lambda name: name == "botocore")
    outcome = stream_once(platform_model("bedrock", BEDROCK_ID, wire), api_key="bedrock-key")
    assert "pip install 'picode[bedrock]'" in (outcome.message.error_message or "")
    assert wire.requests == []


def test_bedrock_without_a_key_or_boto3_names_both_ways_in(
    wire: WireServer, platform_env: pytest.MonkeyPatch
) -> None:
    platform_env.setenv("AWS_REGION", "us-east-1")
    platform_env.setattr(clients, "module_missing", lambda name: name == "boto3")
    outcome = stream_once(platform_model("bedrock", BEDROCK_ID, wire), api_key=None)
    text = outcome.message.error_message or ""
    assert "AWS_BEARER_TOKEN_BEDROCK" in text and "pip install 'picode[bedrock]'" in text
    assert wire.requests == []


def test_bedrock_without_a_region_or_url_says_what_to_set(
    platform_env: pytest.MonkeyPatch,
) -> None:
    platform_env.setattr(clients, "module_missing", lambda name: False)
    info = builtin_registry().providers["bedrock"]
    model = Model(id=BEDROCK_ID, name=BEDROCK_ID, api=info.api, provider="bedrock")
    outcome = stream_once(model, api_key="bedrock-key")
    assert "bedrock needs a region: set AWS_REGION" in (outcome.message.error_message or "")
