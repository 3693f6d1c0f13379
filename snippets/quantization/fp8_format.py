"""FP8 by hand: the values E4M3 and E5M2 can hold, rounding to them, and what the scale
does. vLLM's --quantization fp8 stores each linear layer's weights in E4M3
(torch.float8_e4m3fn) with one float32 scale for the tensor, and on an RTX 4090
quantizes the activations to E4M3 with one scale per token."""

from bisect import bisect_left


def fp8_values(exponent_bits: int, mantissa_bits: int) -> list[float]:
    """The finite values >= 0, in the order of their codes. E5M2 is IEEE-like: its top
    exponent holds inf and NaN. E4M3 (the "fn" variant) has no inf: only its very top
    code, S.1111.111, is NaN, so its top exponent holds values too."""
    bias = 2 ** (exponent_bits - 1) - 1
    top = 2**exponent_bits - 1
    values = []
    for exponent in range(top + 1):
        if exponent == top and exponent_bits == 5:
            break  # E5M2: inf and NaN
        for mantissa in range(2**mantissa_bits):
            fraction = mantissa / 2**mantissa_bits
            if exponent == 0:  # subnormal: no implicit leading 1
                values.append(fraction * 2.0 ** (1 - bias))
            else:
                values.append((1 + fraction) * 2.0 ** (exponent - bias))
    if exponent_bits == 4:
        values.pop()  # S.1111.111: NaN
    return values


E4M3, E5M2 = fp8_values(4, 3), fp8_values(5, 2)


def to_fp8(x: float, grid: list[float]) -> float:
    """Round to nearest, ties to the even code; beyond the largest value, saturate to
    it, as vLLM clamps before it converts (vllm/model_executor/layers/quantization/
    utils/quant_utils.py: scaled_quantize)."""
    magnitude = min(abs(x), grid[-1])
    i = bisect_left(grid, magnitude)
    if i == len(grid) or (i > 0 and magnitude - grid[i - 1] < grid[i] - magnitude):
        i -= 1
    elif i > 0 and magnitude - grid[i - 1] == grid[i] - magnitude and i % 2:
        i -= 1  # a tie: the even code
    return grid[i] if x >= 0 else -grid[i]


def quantize(rows: list[list[float]], per_row: bool) -> list[list[float]]:
    """E4M3 with a scale: amax / 448 for the whole tensor, or for each row (a token's
    activations, or an output channel's weights); the values, dequantized."""
    tensor_amax = max(abs(v) for row in rows for v in row)
    out = []
    for row in rows:
        scale = (max(abs(v) for v in row) if per_row else tensor_amax) / E4M3[-1]
        out.append([to_fp8(v / scale, E4M3) * scale for v in row])
    return out


if __name__ == "__main__":
    for name, grid in (("E4M3", E4M3), ("E5M2", E5M2)):
        normal = next(v for v in grid if v >= 2 ** -(6 if name == "E4M3" else 14))
        print(
            f"{name}: {2 * len(grid) - 1} finite values, largest {grid[-1]:g},"
            f" smallest normal {normal:g}, smallest {grid[1]:g}"
        )
    print("x          E4M3       E5M2")
    for x in (0.1, 1.0, 3.14159, 100.0, 300.0, 500.0):
        print(f"{x:<10g} {to_fp8(x, E4M3):<10g} {to_fp8(x, E5M2):g}")
    rows = [[0.011, -0.0043, 0.0278, 0.0009], [61.0, -0.37, 2.9, -0.86]]
    print("two rows, one with an outlier of 61; worst relative error of each row:")
    for per_row in (False, True):
        errors = [
            max(abs(q - v) / abs(v) for v, q in zip(row, qrow))
            for row, qrow in zip(rows, quantize(rows, per_row))
        ]
        scope = "per row   " if per_row else "per tensor"
        print(f"  scale {scope}: " + ", ".join(f"{e:.1%}" for e in errors))
