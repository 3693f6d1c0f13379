"""AWQ's idea on one group of 8 weights: scale each input channel up by how large its
activations are before rounding to 4 bits, and divide the activations by the same
factor, so the product is unchanged and the channels that matter lose less. A toy:
real checkpoints use groups of 128 and search the scales layer by layer."""

# One output channel's 8 weights (one group), and 4 calibration tokens' activations on
# the 8 input channels: channel 2 carries activations about 20 times the others'.
W = [0.19, -0.43, 0.13, 0.38, -0.20, 0.05, -0.28, 0.40]
X = [
    [0.8, -1.1, 21.0, 0.5, -0.9, 1.2, 0.3, -0.6],
    [-0.4, 0.9, -18.5, 1.1, 0.7, -0.5, 1.0, 0.2],
    [1.3, 0.2, 23.0, -0.8, 0.4, 0.6, -1.2, 0.9],
    [-0.7, -0.6, -20.0, 0.3, 1.1, -0.9, 0.5, -1.0],
]


def int4_group(weights: list[float]) -> list[float]:
    """Round one group to 4 bits as AWQ's checkpoints store it: asymmetric, a scale and
    a zero point for the group, codes 0 to 15; the values, dequantized."""
    low, high = min(weights), max(weights)
    step = (high - low) / 15
    zero = round(-low / step)
    return [(min(max(round(w / step) + zero, 0), 15) - zero) * step for w in weights]


def output_error(alpha: float) -> tuple[float, list[float]]:
    """Channel scales s = (mean |activation|) ** alpha, normalised (AWQ's search, alpha
    from 0 to 1); quantize W * s, divide by s again; the mean squared error of the
    4 tokens' outputs against the 16-bit ones."""
    mean_abs = [sum(abs(x[j]) for x in X) / len(X) for j in range(len(W))]
    s = [m**alpha for m in mean_abs]
    norm = (max(s) * min(s)) ** 0.5
    s = [v / norm for v in s]
    q = [v / sj for v, sj in zip(int4_group([w * sj for w, sj in zip(W, s)]), s)]
    error = sum(
        (
            sum(x[j] * W[j] for j in range(len(W)))
            - sum(x[j] * q[j] for j in range(len(W)))
        )
        ** 2
        for x in X
    ) / len(X)
    return error, q


if __name__ == "__main__":
    alphas = [a / 4 for a in range(5)]
    print("alpha  output MSE (alpha 0: round to nearest, no scaling)")
    for alpha in alphas:
        print(f"{alpha:<6} {output_error(alpha)[0]:.5f}")
    best = min(alphas, key=lambda alpha: output_error(alpha)[0])
    plain, scaled = output_error(0.0)[1], output_error(best)[1]
    print("weights            " + " ".join(f"{w:6.3f}" for w in W))
    print("4-bit, no scaling  " + " ".join(f"{w:6.3f}" for w in plain))
    print(f"4-bit, alpha {best:<4}  " + " ".join(f"{w:6.3f}" for w in scaled))
