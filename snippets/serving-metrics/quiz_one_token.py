"""Self-test: two requests, one with a single output token. What TPOT does vllm bench
serve report, and do both meet a 40 ms TPOT SLO?"""

from serving_metrics import goodput, request_metrics, summary

long = request_metrics(0.0, [0.2, 0.25, 0.30, 0.35, 0.40])  # sent at 0 s
short = request_metrics(0.0, [0.3])  # a one-token answer
stats = summary([long, short])
print(f"TPOT of each: {long['tpot'] * 1000:.1f} ms and {short['tpot'] * 1000:.1f} ms")
print(f"mean TPOT reported: {stats['mean_tpot_ms']:.1f} ms")
print(f"goodput over 1 s, SLO tpot 40 ms: {goodput([long, short], {'tpot': 40}, 1.0)}")
