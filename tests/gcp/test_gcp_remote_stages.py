"""`query` calling the `rerank` and `compose` functions over HTTP with a Google ID token, end to end in process.

The two functions are the real routes (api.routes.dispatch_one, what functions/rerank and functions/compose
serve) on local HTTP servers, behind a stand-in for Cloud Run's IAM check (a bearer ID token whose audience is
the service URL, else 401). The ID tokens come from google-auth's metadata-server path, pointed at a local fake
metadata server (GCE_METADATA_HOST), in a subprocess because google-auth reads that variable at import.
Every failure (refused, timed out, 500, not JSON, a quote that is not verbatim) falls back with its status.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from fakes.gemini_fake import GeminiFake, Reply
from fakes.rerank_model import prefer_last
from regrag.api import endpoints
from regrag.api.routes import call, dispatch_one
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings

QUESTION = "供电设施计划检修需要停电时，供电企业应当提前几天通知用户？"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def id_token_for(audience: str, email: str = "regrag-query@p.iam.gserviceaccount.com") -> str:
    """The shape of a metadata-server ID token (Cloud Run checks the signature; the stand-in does not)."""
    header = b64(json.dumps({"alg": "RS256", "kid": "k"}).encode())
    claims = {"aud": audience, "email": email, "iss": "https://accounts.google.com", "exp": int(time.time()) + 3600}
    return f"{header}.{b64(json.dumps(claims).encode())}.c2lnbmF0dXJl"


class CloudRun:
    """A function behind Cloud Run's IAM check; `mode` scripts a misbehaving deployment."""

    def __init__(self, services, endpoint: str) -> None:
        self.services, self.endpoint = services, endpoint
        self.mode = "ok"
        self.seen_audiences: list[str] = []
        self.in_flight = threading.Semaphore(64)  # requests still running (a "slow" one outlives its caller)
        self.server = make_server("127.0.0.1", 0, self._counted, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _counted(self, environ, start_response):
        with self.in_flight:
            return self.app(environ, start_response)

    def app(self, environ, start_response):
        request = Request(environ)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        try:
            claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
        except (IndexError, ValueError):
            claims = {}
        self.seen_audiences.append(claims.get("aud"))
        if claims.get("aud") != self.url:
            return Response("Unauthorized", 401)(environ, start_response)
        if self.mode == "error":
            return Response("boom", 500)(environ, start_response)
        if self.mode == "slow":
            time.sleep(1.5)
        if self.mode == "html":
            return Response("<html>proxy</html>", 200, content_type="text/html")(environ, start_response)
        response = dispatch_one(self.services, request, self.endpoint)
        if self.mode == "forged" and self.endpoint == "compose" and response.status_code == 200:
            body = json.loads(response.get_data())
            body["bullets"][0]["span"] = "供电企业可以随时停电，无需通知用户。"  # a quote no regulation says
            response = Response(json.dumps(body, ensure_ascii=False), 200, content_type="application/json")
        return response(environ, start_response)

    def close(self):
        """Stop serving and wait for the requests still running: the services they use are closed next, and
        an SQLite connection closed under a running query crashes the process."""
        self.server.shutdown()
        for _ in range(64):
            assert self.in_flight.acquire(timeout=10), "a request to the stand-in never finished"


@pytest.fixture
def stages(tmp_path):
    with GeminiFake(default=Reply.computed(prefer_last)) as gemini:
        gemini_settings = {"gemini_api_key": "k", "gemini_base_url": gemini.base_url}
        remote = build_services(make_settings(tmp_path, **gemini_settings))  # what the two functions run
        ingest_sample(remote, ["nat-reg-0088", "nat-law-0069"])
        rerank, compose = CloudRun(remote, "rerank"), CloudRun(remote, "compose")
        yield tmp_path, rerank, compose
        rerank.close()
        compose.close()
        remote.close()


def ask(tmp_path, rerank, compose, **overrides):
    settings = make_settings(tmp_path, rerank_url=rerank.url, compose_url=compose.url, **overrides)
    services = build_services(settings)
    tokens = id_token_for  # what MetadataIdTokens returns on GCP (tested below against a metadata server)
    services.remote_reranker.tokens = tokens
    services.composer.tokens = tokens
    try:
        status, body = call(endpoints.query, services, {"question": QUESTION})
    finally:
        services.close()
    assert status == 200, body
    return body


def test_query_reranks_and_composes_through_the_two_functions(stages):
    tmp_path, rerank, compose = stages
    body = ask(tmp_path, rerank, compose)
    assert (body["rerank_status"], body["compose_status"]) == ("ok", "remote")
    assert rerank.seen_audiences == [rerank.url] and compose.seen_audiences == [compose.url]
    assert body["bullets"] and "提前7天" in "".join(b["span"] for b in body["bullets"])


@pytest.mark.parametrize(
    ("mode", "status"),
    [("error", "remote_error"), ("slow", "remote_timeout"), ("html", "remote_invalid"), ("forged", None)],
)
def test_every_failure_falls_back_and_says_so(stages, mode, status):
    tmp_path, rerank, compose = stages
    rerank.mode = compose.mode = mode
    body = ask(tmp_path, rerank, compose, rerank_timeout_s=0.3, compose_timeout_s=1.0)
    if mode == "forged":  # the rerank answer is untouched; the compose answer fails the verbatim check
        assert body["rerank_status"] == "ok" and body["compose_status"] == "fallback:remote_not_verbatim"
    else:
        assert body["rerank_status"] == f"fallback:{status}" and body["compose_status"] == f"fallback:{status}"
    spans = "".join(b["span"] for b in body["bullets"])
    assert "提前7天" in spans and "随时停电" not in spans  # composed in process, verbatim


def test_a_token_for_the_wrong_audience_is_refused_and_falls_back(stages):
    tmp_path, rerank, compose = stages
    settings = make_settings(tmp_path, rerank_url=rerank.url, compose_url=compose.url)
    services = build_services(settings)
    services.remote_reranker.tokens = services.composer.tokens = lambda _: id_token_for("https://elsewhere.run.app")
    status, body = call(endpoints.query, services, {"question": QUESTION})
    services.close()
    assert status == 200 and body["rerank_status"] == body["compose_status"] == "fallback:remote_auth"


class MetadataServer(BaseHTTPRequestHandler):
    """GCE metadata server: the ping (Metadata-Flavor: Google) and identity tokens for an audience."""

    def do_GET(self):
        from urllib.parse import parse_qs, urlparse

        url = urlparse(self.path)
        kind = "application/text"
        if url.path.endswith("/service-accounts/default/identity"):
            body = id_token_for(parse_qs(url.query)["audience"][0]).encode()
        elif url.path.endswith("/service-accounts/default/"):  # the account's details, asked before a token
            body = json.dumps({"email": "regrag-query@p.iam.gserviceaccount.com", "aliases": ["default"]}).encode()
            kind = "application/json"
        else:
            body = b""
        self.send_response(200)
        self.send_header("Metadata-Flavor", "Google")
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_id_tokens_come_from_the_metadata_server_for_the_functions_url(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), MetadataServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    script = (
        "import base64, json; from regrag.adapters.gcp.remote import MetadataIdTokens; "
        "t = MetadataIdTokens(); a = t('https://rerank-x.a.run.app'); b = t('https://rerank-x.a.run.app'); "
        "print(json.dumps([a == b, json.loads(base64.urlsafe_b64decode(a.split('.')[1] + '=='))['aud']]))"
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "PYTHONPATH": str(Path(__file__).parents[2] / "shared"),
        "GCE_METADATA_HOST": host,
        "GCE_METADATA_IP": host,
    }
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    server.shutdown()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, "https://rerank-x.a.run.app"]  # one fetch, reused
