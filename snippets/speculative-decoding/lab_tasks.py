"""The lab's two tasks: one whose answer repeats its prompt (edit a given text), one
that does not (write something new). Greedy, a fixed length: the same work with and
without speculation, so that only the speed may differ."""

TEXT = (
    "The KV cache stores the keys and values of every token a request has seen, so"
    " that each decode step computes attention for the new token only. Its size grows"
    " with the context length, the number of layers and the number of KV heads. On one"
    " RTX 4090 the weights of a 7B model in BF16 take about 14 GiB, which leaves the"
    " rest of the memory for the KV cache of all running requests. "
)
TASKS = {
    "edit": "Copy the following text exactly, but replace every 'KV cache' with "
    "'key-value cache':\n\n" + TEXT * 3,
    "free": "Write a short story about a lighthouse keeper who learns to play the"
    " violin.",
}
MAX_TOKENS = 256
CONCURRENCY = (1, 32)

if __name__ == "__main__":
    for name, prompt in TASKS.items():
        print(f"{name}: {len(prompt.split())} words, {prompt[:60]!r}...")
    print(f"{MAX_TOKENS} tokens per request, at concurrency {CONCURRENCY}")
