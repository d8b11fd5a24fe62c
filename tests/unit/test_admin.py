"""Who may call the admin endpoints: the admin token locally, REGRAG_ADMIN_PRINCIPALS on GCP.

The GCP tokens here are hand-made and unsigned: verifying Google's signature is Cloud Run IAM's job before a
request reaches the function (and Cloud Run hands the token on with its signature removed), so the policy
only reads the payload. See regrag.ops.admin.caller_email for the trust assumptions.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from regrag.config import ConfigError, Settings
from regrag.domain.errors import Forbidden, Unauthorized
from regrag.ops.admin import require_admin

SCHEDULER = "regrag-scheduler@regrag-prod.iam.gserviceaccount.com"
PRINCIPALS = frozenset({SCHEDULER, "ops@example.com"})


def b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def id_token(signature: str = "SIGNATURE_REMOVED_BY_GOOGLE", **claims) -> str:
    """A JWT shaped like a Google ID token as Cloud Run forwards it (header.payload.signature)."""
    payload = {
        "iss": "https://accounts.google.com",
        "aud": "https://query-abc-ew.a.run.services",
        "sub": "112233",
        "exp": 4102444800,
        "email_verified": True,
        **claims,
    }
    return f"{b64url({'alg': 'RS256', 'typ': 'JWT'})}.{b64url(payload)}.{signature}"


def gcp(authorization=None, serverless=None, principals=PRINCIPALS):
    return require_admin("gcp", None, principals, authorization, serverless)


def test_gcp_admits_a_listed_principal_and_returns_its_email():
    assert gcp(f"Bearer {id_token(email=SCHEDULER)}") == SCHEDULER
    assert gcp(f"bearer {id_token(email='Ops@Example.com', signature='c2ln')}") == "ops@example.com"  # any case


def test_gcp_without_principals_is_disabled_whatever_the_caller():
    with pytest.raises(Forbidden, match="admin endpoints are disabled: set REGRAG_ADMIN_PRINCIPALS"):
        gcp(f"Bearer {id_token(email=SCHEDULER)}", principals=frozenset())


def test_gcp_names_an_identity_that_is_not_listed():
    with pytest.raises(Forbidden, match=r"lawyer@example\.com is not in REGRAG_ADMIN_PRINCIPALS"):
        gcp(f"Bearer {id_token(email='lawyer@example.com')}")


@pytest.mark.parametrize(
    ("authorization", "message"),
    [
        (None, "send 'Authorization: Bearer <Google ID token>'"),
        ("", "send 'Authorization: Bearer <Google ID token>'"),
        ("Basic dXNlcjpwdw==", "must be 'Bearer <Google ID token>'"),
        ("Bearer s3cret-token", "must be 'Bearer <Google ID token>'"),  # the local admin token means nothing here
        ("Bearer a.b", "must be 'Bearer <Google ID token>'"),
        ("Bearer aaa.!!!.ccc", "not a JWT with a JSON payload"),
        (f"Bearer {b64url({'alg': 'none'})}.{base64.urlsafe_b64encode(b'[1]').decode()}.x", "not a Google ID token"),
        (f"Bearer {id_token(iss='https://evil.example', email=SCHEDULER)}", "not a Google ID token"),
        (f"Bearer {id_token()}", "no verified email claim"),  # the metadata server's format=standard
        (f"Bearer {id_token(email=SCHEDULER, email_verified=False)}", "no verified email claim"),
    ],
)
def test_gcp_missing_or_unusable_bearer_is_401(authorization, message):
    with pytest.raises(Unauthorized, match=re.escape(message)):
        gcp(authorization)


def test_gcp_trusts_x_serverless_authorization_over_authorization():
    # Cloud Run IAM checks X-Serverless-Authorization when present and passes Authorization through unchecked:
    # an invoker who may only query must not become an admin by adding an Authorization header naming one.
    lawyer, forged = id_token(email="lawyer@example.com"), id_token(email=SCHEDULER)
    with pytest.raises(Forbidden, match=r"lawyer@example\.com is not in"):
        gcp(f"Bearer {forged}", serverless=f"Bearer {lawyer}")
    assert gcp("Bearer services-level-token", serverless=f"Bearer {id_token(email=SCHEDULER)}") == SCHEDULER


def test_local_mode_keeps_the_token_check_and_ignores_principals():
    assert require_admin("local", "s3cret-token", PRINCIPALS, "Bearer s3cret-token") == "admin token"
    with pytest.raises(Unauthorized):
        require_admin("local", "s3cret-token", PRINCIPALS, None)
    with pytest.raises(Forbidden, match="the token is not valid"):
        require_admin("local", "s3cret-token", PRINCIPALS, f"Bearer {id_token(email=SCHEDULER)}")
    with pytest.raises(Forbidden, match="REGRAG_ADMIN_TOKEN"):
        require_admin("local", None, PRINCIPALS, "Bearer s3cret-token")


def test_admin_principals_setting_is_a_list_of_emails():
    base = {
        "REGRAG_MODE": "gcp",
        "REGRAG_GCP_PROJECT": "p",
        "REGRAG_GCP_REGION": "r",
        "REGRAG_BUCKET": "b",
        "REGRAG_STATE_BUCKET": "s",
        "REGRAG_VERTEX_INDEX": "projects/p/locations/l/indexes/1",
        "REGRAG_VERTEX_INDEX_ENDPOINT": "projects/123/locations/l/indexEndpoints/2",
        "REGRAG_VERTEX_DEPLOYED_INDEX_ID": "d",
        "REGRAG_VERTEX_PUBLIC_HOST": "h",
    }
    settings = Settings.from_env({**base, "REGRAG_ADMIN_PRINCIPALS": f" {SCHEDULER.upper()} , ops@example.com"})
    assert settings.admin_principal_emails == PRINCIPALS
    assert Settings.from_env({**base, "REGRAG_ADMIN_PRINCIPALS": ""}).admin_principal_emails == frozenset()
    with pytest.raises(ConfigError, match="REGRAG_ADMIN_PRINCIPALS"):  # an IAM member string never matches a token
        Settings.from_env({**base, "REGRAG_ADMIN_PRINCIPALS": f"serviceAccount:{SCHEDULER}"})
