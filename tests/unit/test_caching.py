def test_identical_questions_asked_at_once_are_embedded_once():
    import threading
    import time

    import numpy as np

    from regrag.query.embedding_cache import QueryEmbeddingCache

    asking = threading.Semaphore(0)  # released by each thread as it asks

    class Slow:
        model_id, dimension = "slow", 2
        calls = 0

        def embed_query(self, text):
            Slow.calls += 1
            # the model answers only once every thread has asked (then a moment to reach the wait): on a loaded
            # machine a thread started late came after the answer and asked again
            for _ in range(20):
                asking.acquire(timeout=10)
            time.sleep(0.2)
            return np.array([1.0, 0.0], dtype=np.float32)

    cache = QueryEmbeddingCache(Slow(), 16)
    results = []

    def ask():
        asking.release()
        results.append(cache.embed_query("同一个问题"))

    threads = [threading.Thread(target=ask) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Slow.calls == 1 and len(results) == 20 and all(r.tolist() == [1.0, 0.0] for r in results)


def test_a_failed_embedding_fails_every_waiter_and_is_not_cached():
    import threading
    import time

    import pytest

    from regrag.query.embedding_cache import QueryEmbeddingCache

    asking = threading.Semaphore(0)  # released by each thread as it asks

    class Broken:
        model_id, dimension = "broken", 2
        calls = 0

        def embed_query(self, text):
            Broken.calls += 1
            for _ in range(5 if Broken.calls == 1 else 0):  # fails only once every thread has asked (as above)
                asking.acquire(timeout=10)
            time.sleep(0.1)
            raise RuntimeError("model crashed")

    cache = QueryEmbeddingCache(Broken(), 16)
    errors = []

    def ask():
        asking.release()
        try:
            cache.embed_query("问题")
        except RuntimeError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == ["model crashed"] * 5 and Broken.calls == 1
    with pytest.raises(RuntimeError):
        cache.embed_query("问题")  # not cached: asked again, embedded again
    assert Broken.calls == 2
