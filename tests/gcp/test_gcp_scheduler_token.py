"""The scheduled jobs' identity end to end: a token minted the way Cloud Scheduler mints its OIDC token (RS256,
Google issuer, audience = the target URL, the service account's email), verified the way Cloud Run verifies it
(google-auth against a certificate endpoint), forwarded as Cloud Run forwards it (signature removed), and read by
the admin check. The signing key and the certificate endpoint are local: no Google account is involved."""

from __future__ import annotations

import base64
import datetime as dt
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID
from google.auth.transport.requests import Request
from google.oauth2 import id_token

from regrag.domain.errors import Unauthorized
from regrag.ops.admin import ADMIN_CLAIMS, GOOGLE_ISSUERS, require_admin

SERVICE_URL = "https://query-abc123-ew.a.run.app"  # what infra/scheduler.tf sets as oidc_token.audience
SCHEDULER = "regrag-scheduler@regrag-prod.iam.gserviceaccount.com"
KID = "test-key-1"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def signer():
    """An RSA key and a self-signed certificate for it, served as Google serves its OAuth2 certificates."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-issuer")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    body = json.dumps({KID: cert.public_bytes(serialization.Encoding.PEM).decode()}).encode()

    class Certs(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Certs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield key, f"http://127.0.0.1:{server.server_address[1]}/certs"
    server.shutdown()


def mint(key, **claims) -> str:
    """A Google-style ID token for the scheduler's service account (the claims Google puts in one)."""
    now = int(time.time())
    payload = {
        "aud": SERVICE_URL,
        "azp": "112233445566778899000",
        "email": SCHEDULER,
        "email_verified": True,
        "exp": now + 3600,
        "iat": now,
        "iss": "https://accounts.google.com",
        "sub": "112233445566778899000",
        **claims,
    }
    payload = {k: v for k, v in payload.items() if v is not None}
    header = {"alg": "RS256", "kid": KID, "typ": "JWT"}
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64(signature)}"


def as_cloud_run_forwards(token: str) -> str:
    head, payload, _ = token.split(".")
    return f"Bearer {head}.{payload}.SIGNATURE_REMOVED_BY_GOOGLE"


def test_a_scheduler_token_passes_cloud_runs_check_and_names_the_scheduler_to_the_admin_check(signer):
    key, certs = signer
    token = mint(key)
    claims = id_token.verify_token(token, Request(), audience=SERVICE_URL, certs_url=certs)  # Cloud Run's check
    assert claims["iss"] in GOOGLE_ISSUERS and all(c in claims for c in ADMIN_CLAIMS)
    assert require_admin("gcp", None, {SCHEDULER}, as_cloud_run_forwards(token)) == SCHEDULER
    # through X-Serverless-Authorization, where Cloud Run puts it when the caller used that header
    assert require_admin("gcp", None, {SCHEDULER}, None, as_cloud_run_forwards(token)) == SCHEDULER


def test_a_token_for_another_audience_never_reaches_the_function(signer):
    key, certs = signer
    with pytest.raises(ValueError, match="audience"):
        id_token.verify_token(mint(key, aud="https://reconcile-abc123-ew.a.run.app"), Request(), SERVICE_URL, certs)


def test_a_token_without_the_email_claim_is_refused_with_how_to_get_one(signer):
    key, certs = signer
    token = mint(key, email=None, email_verified=None)  # a user token minted without --include-email
    id_token.verify_token(token, Request(), audience=SERVICE_URL, certs_url=certs)  # valid for Cloud Run
    with pytest.raises(Unauthorized, match="include-email"):
        require_admin("gcp", None, {SCHEDULER}, as_cloud_run_forwards(token))
