"""Speculative decoding in two functions: how many tokens a verification step yields on
average, and how vLLM 0.26.0 verifies draft tokens under greedy sampling.

A request proposes k draft tokens; the target model runs once over the last sampled
token and the k drafts, which gives it k + 1 next-token distributions. Under greedy
sampling a draft is kept while it equals the target's own choice (argmax); at the first
mismatch the target's choice replaces it and the rest are dropped; when every draft
passes, the target's choice after the last draft is a free extra token, the bonus.
"""


def expected_tokens(a: float, k: int) -> float:
    """Tokens one verification step yields on average when each draft is accepted with
    probability a, independently, until the first rejection: 1 + a + ... + a**k, which
    is (1 - a**(k+1)) / (1 - a) (Leviathan et al. 2023, eq. 1). The 1 is the token the
    target adds in every step: the correction at a rejection, or the bonus."""
    if not 0 <= a <= 1:
        raise ValueError(f"the acceptance rate a must be in [0, 1], got {a!r}")
    if type(k) is not int or k < 0:
        raise ValueError(
            f"k, the number of draft tokens, must be an integer >= 0: {k!r}"
        )
    if a == 1:
        return float(k + 1)
    return (1 - a ** (k + 1)) / (1 - a)


def verify(target_tokens: list[int], draft_tokens: list[int]) -> tuple[list[int], int]:
    """Greedy verification of k drafts against the target's k + 1 choices (its argmax
    after the last sampled token and after each draft). Returns the accepted drafts and
    the one token the target adds: at the first mismatch its own choice there (vLLM's
    recovered token), or when all k pass its choice after the last one (the bonus).
    Mirrors vllm/v1/sample/rejection_sampler.py: rejection_greedy_sample_kernel."""
    if len(target_tokens) != len(draft_tokens) + 1:
        raise ValueError(
            f"the target gives one choice more than there are drafts: "
            f"{len(target_tokens)} choices for {len(draft_tokens)} drafts"
        )
    accepted = []
    for draft, target in zip(draft_tokens, target_tokens):
        if draft != target:  # rejected = draft_token_id != target_argmax_id
            break
        accepted.append(draft)
    return accepted, target_tokens[len(accepted)]


if __name__ == "__main__":
    print("tokens per verification step, 1 + a + ... + a^k:")
    print("   a    k=1   k=3   k=5   k=8")
    for a in (0.3, 0.5, 0.7, 0.9):
        row = "".join(f"{expected_tokens(a, k):>6.2f}" for k in (1, 3, 5, 8))
        print(f"{a:>4.1f} {row}")
    target = [11, 12, 13, 99]  # the target's argmax after "10", "11", "12", "13"
    for drafts in ([11, 12, 13], [11, 42, 13], [7, 12, 13]):
        accepted, added = verify(target, drafts)
        print(f"drafts {drafts} vs target {target}: accepted {accepted}, adds {added}")
