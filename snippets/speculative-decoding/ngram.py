"""The n-gram proposer (prompt lookup) of vLLM 0.26.0, in plain Python: find where the
last tokens of the sequence appeared before, and propose the tokens that followed them.

vLLM's rule (vllm/v1/spec_decode/ngram_proposer.py:
_find_longest_matched_ngram_and_propose_tokens, a KMP search over the reversed tokens)
is the same as this slower one: an earlier occurrence starts at position s and matches
the sequence's last n tokens, n <= prompt_lookup_max, ending before the last token; the
longest n wins, at equal n the earliest s; if n < prompt_lookup_min, no proposal;
otherwise up to k tokens that follow the occurrence, fewer when the sequence ends first
or max_model_len is near. prompt_lookup_min and _max default to 5 when neither is given
(vllm/config/speculative.py: SpeculativeConfig.__post_init__).
"""


def match_length(tokens: list[int], start: int, max_n: int) -> int:
    """The longest n <= max_n with tokens[start:start+n] equal to the last n tokens,
    for an occurrence that ends before the last token."""
    total = len(tokens)
    longest = 0
    for n in range(1, min(max_n, total - 1 - start) + 1):
        if tokens[start : start + n] == tokens[total - n :]:
            longest = n
    return longest


def propose_ngram(
    tokens: list[int], min_n: int, max_n: int, k: int, max_model_len: int
) -> list[int]:
    """Up to k draft tokens for a sequence (prompt and output so far), or none."""
    if not 1 <= min_n <= max_n:
        raise ValueError(
            f"need 1 <= prompt_lookup_min <= prompt_lookup_max, got {min_n}, {max_n}"
        )
    if k < 1:
        raise ValueError(f"num_speculative_tokens must be >= 1, got {k}")
    total = len(tokens)
    if total < min_n:
        return []
    k = min(k, max_model_len - total)  # never draft past max_model_len
    if k <= 0:
        return []
    best_n, best_start = 0, 0
    for start in range(total - 1):
        n = match_length(tokens, start, max_n)
        if n > best_n:  # strictly longer: an equal match later does not replace it
            best_n, best_start = n, start
    if best_n < min_n:
        return []
    follow = best_start + best_n
    return tokens[follow : follow + k]


if __name__ == "__main__":
    words = "the cat sat on the mat . the cat sat on the".split()
    vocab = {word: number for number, word in enumerate(dict.fromkeys(words))}
    tokens = [vocab[word] for word in words]
    print(f"tokens: {tokens}  ({' '.join(words)})")
    for min_n, max_n, k in ((1, 3, 4), (2, 5, 4), (5, 5, 4), (1, 1, 3)):
        drafts = propose_ngram(tokens, min_n, max_n, k, max_model_len=4096)
        names = " ".join(words[tokens.index(t)] for t in drafts) or "-"
        print(f"min {min_n} max {max_n} k {k}: drafts {drafts}  ({names})")
