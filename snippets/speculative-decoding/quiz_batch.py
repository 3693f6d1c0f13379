"""Self-test: n-gram speculation with k = 3 on a task where a = 0.5, contexts of 1,024
tokens. From which batch size on does the model predict it slows decoding down?"""

from speedup import speedup

slower = next(b for b in range(1, 165) if speedup(0.5, 3, b, 1024, False) < 1)
print(f"first batch size slower than plain decoding: {slower}")
print(f"speed-up there: {speedup(0.5, 3, slower, 1024, False):.3f}")
print(f"positions computed per verification step: {slower * (3 + 1)}")
print(f"one smaller: {speedup(0.5, 3, slower - 1, 1024, False):.3f}")
