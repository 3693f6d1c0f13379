"""Self-test: an 8,000-token prompt's KV over 10 GbE, beside its prefill."""

from kv_transfer import LINKS, MIB, kv_transfer_bytes, prefill_seconds, transfer_seconds

PROMPT = 8000
size = kv_transfer_bytes(PROMPT) / MIB
moved = transfer_seconds(PROMPT, LINKS["10 GbE TCP"])
computed = prefill_seconds(PROMPT)
print(f"{PROMPT} tokens: {size:.1f} MiB of KV, {moved * 1e3:.0f} ms over 10 GbE"
      f" (estimate), prefill bound {computed * 1e3:.0f} ms")  # fmt: skip
