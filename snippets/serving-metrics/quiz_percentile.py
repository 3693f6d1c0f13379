"""Self-test: the p99 and the median of ten TTFTs, as vllm bench serve computes them."""

from serving_metrics import median, percentile

ttfts_ms = [120, 95, 101, 99, 130, 97, 2400, 110, 105, 98]
print(f"p99 TTFT: {percentile(ttfts_ms, 99):.2f} ms")
print(f"p90 TTFT: {percentile(ttfts_ms, 90):.2f} ms")
print(f"median TTFT: {median(ttfts_ms):.2f} ms")
