"""The rerank and compose functions called over HTTP by `query`, with a Google ID token.

On GCP each function is its own Cloud Run service; `query` reaches `rerank` and `compose` at their run.app URLs
(REGRAG_RERANK_URL, REGRAG_COMPOSE_URL), authenticated by an ID token for the URL (audience = the URL) that
the metadata server mints for query's service account, the only principal holding roles/run.invoker on them
(infra/iam.tf). Cloud Run verifies the token before the function runs.

Failures never fail the answer: the remote reranker returns the retrieval order with
`fallback:remote_<reason>`, and a remote compose raises so that the query path composes in process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import requests

from regrag.domain.results import Candidate

TokenSource = Callable[[str], str]  # audience → a Google ID token for it
# a token is reused until 5 minutes before it expires (Google ID tokens live an hour), so one never expires in
# flight; a token without `exp` is taken to live 10 minutes
REFRESH_BEFORE_S = 300
ASSUMED_LIFETIME_S = 600


class MetadataIdTokens:
    """ID tokens from the metadata server (google-auth), one per audience, reused until 5 minutes before expiry."""

    def __init__(self) -> None:
        self._tokens: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def __call__(self, audience: str) -> str:
        from google.auth import jwt
        from google.auth.transport.requests import Request
        from google.oauth2 import id_token

        with self._lock:
            cached = self._tokens.get(audience)
            if cached and cached[0] - REFRESH_BEFORE_S > time.time():
                return cached[1]
        token = id_token.fetch_id_token(Request(), audience)
        expiry = float(jwt.decode(token, verify=False).get("exp", time.time() + ASSUMED_LIFETIME_S))
        with self._lock:
            self._tokens[audience] = (expiry, token)
        return token


class RemoteFailure(Exception):
    """The remote function did not give a usable answer; `reason` is the status suffix."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def post_json(url: str, body: dict[str, Any], tokens: TokenSource, timeout_s: float) -> dict[str, Any]:
    """POST `body` to `url` with an ID token for it; the JSON object answered, or RemoteFailure."""
    try:
        token = tokens(url)
    except Exception as exc:
        raise RemoteFailure("remote_auth", f"no ID token for {url}: {exc}") from exc
    try:
        response = requests.post(
            url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=(min(2.0, timeout_s), timeout_s)
        )
    except requests.Timeout as exc:
        raise RemoteFailure("remote_timeout", f"{url} did not answer within {timeout_s} s") from exc
    except requests.RequestException as exc:
        raise RemoteFailure("remote_unreachable", f"{url}: {exc}") from exc
    if response.status_code in (401, 403):
        raise RemoteFailure("remote_auth", f"{url} refused the call ({response.status_code})")
    if response.status_code != 200:
        raise RemoteFailure("remote_error", f"{url} answered {response.status_code}")
    try:
        data = response.json()
    except ValueError as exc:
        raise RemoteFailure("remote_invalid", f"{url} answered something that is not JSON") from exc
    if not isinstance(data, dict):
        raise RemoteFailure("remote_invalid", f"{url} answered JSON that is not an object")
    return data


class RemoteReranker:
    """The Reranker port on the `rerank` function: its order and status, or the retrieval order on failure."""

    def __init__(self, url: str, tokens: TokenSource, timeout_s: float) -> None:
        self.url = url  # the function's run.app URL: also the ID token's audience, which Cloud Run checks
        self.tokens = tokens
        self.timeout_s = timeout_s

    def rerank(self, question: str, candidates: Sequence[Candidate], top_n: int) -> tuple[list[Candidate], str]:
        candidates = list(candidates)
        body = {"question": question, "candidates": [{"id": c.chunk.id} for c in candidates], "top_n": top_n}
        try:
            data = post_json(self.url, body, self.tokens, self.timeout_s)
            by_id = {c.chunk.id: c for c in candidates}
            ids = [str(item.get("id")) for item in data.get("candidates", []) if isinstance(item, dict)]
            if sorted(ids) != sorted(by_id):
                raise RemoteFailure("remote_invalid", f"{self.url} did not return the candidates it was sent")
        except RemoteFailure as exc:
            return candidates, f"fallback:{exc.reason}"
        status = data.get("rerank_status")
        return [by_id[i] for i in ids], status if isinstance(status, str) else "fallback:remote_invalid"


class RemoteComposer:
    """The Composer port on the `compose` function."""

    def __init__(self, url: str, tokens: TokenSource, timeout_s: float) -> None:
        self.url = url
        self.tokens = tokens
        self.timeout_s = timeout_s

    def compose(self, question: str, candidate_ids: Sequence[str], filters: dict[str, Any]) -> dict[str, Any]:
        body = {"question": question, "candidates": [{"id": i} for i in candidate_ids], "filters": filters}
        return post_json(self.url, body, self.tokens, self.timeout_s)
