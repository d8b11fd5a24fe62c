"""bench/first_quote_signals.py: how often each signal prefers the quote holding a key, counted both ways."""

from conftest import bench_module


def _module():
    return bench_module("first_quote_signals")


def test_a_signal_is_counted_for_the_key_holder_after_a_wrong_first_and_against_a_right_first():
    tally = _module().tally
    wrong_first = [
        {"key": False, "retrieval rank": 1, "unit fit": 0.2},
        {"key": True, "retrieval rank": 2, "unit fit": 0.5},  # fit prefers it, rank does not
    ]
    right_first = [
        {"key": True, "retrieval rank": 1, "unit fit": 0.4},
        {"key": False, "retrieval rank": 3, "unit fit": 0.6},  # fit would move a wrong one first
        {"key": False, "retrieval rank": 2, "unit fit": 0.4},  # a tie on fit counts neither way
    ]
    counts = tally([wrong_first, right_first], ["retrieval rank", "unit fit"])
    assert counts["unit fit"] == {"better": 1, "worse": 0, "tied": 0, "against_right": 1, "for_right": 0}
    # lower ranks are better: the key-holder's rank 2 loses to 1, and both later quotes rank below a right first
    assert counts["retrieval rank"] == {"better": 0, "worse": 1, "tied": 0, "against_right": 0, "for_right": 2}
