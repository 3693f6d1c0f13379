"""GPTQ's step on two columns: quantize one weight, then move the other to make up for
its error, weighted by how the inputs go together (the inverse Hessian of the layer's
squared output error); with act-order, the column with the larger inputs goes first.
A toy: real GPTQ does this for every column of a layer, a block at a time."""

# One output channel's two weights, and 6 calibration tokens' inputs on the two input
# channels: the two are strongly correlated, and channel 1's inputs are larger.
W = [0.24, -0.16]
X = [[1.0, 2.1], [-0.5, -1.2], [0.8, 1.5], [1.2, 2.6], [-0.9, -1.7], [0.3, 0.8]]
STEP = 0.1  # the grid: symmetric 4-bit with a scale of 0.1, codes -8 to 7


def to_grid(w: float) -> float:
    return min(max(round(w / STEP), -8), 7) * STEP


def show(q: list[float]) -> str:
    return "[" + ", ".join(f"{v:.1f}" for v in q) + "]"


def output_error(q: list[float]) -> float:
    """Sum over the tokens of (x.w - x.q) ** 2: what GPTQ minimises, layer by layer."""
    return sum((sum(x[j] * (W[j] - q[j]) for j in range(2))) ** 2 for x in X)


def hessian() -> list[list[float]]:
    """H = 2 X^T X, the Hessian of output_error in the weights."""
    return [[2 * sum(x[i] * x[j] for x in X) for j in range(2)] for i in range(2)]


def gptq(order: list[int]) -> list[float]:
    """Quantize the columns in this order; after each, move the columns still to come by
    -(w - q) / Hinv[i][i] * Hinv[i][j] (the optimal brain surgeon update)."""
    h = hessian()
    det = h[0][0] * h[1][1] - h[0][1] * h[1][0]
    hinv = [[h[1][1] / det, -h[0][1] / det], [-h[1][0] / det, h[0][0] / det]]
    w, q = list(W), [0.0, 0.0]
    first, second = order
    q[first] = to_grid(w[first])
    w[second] -= (w[first] - q[first]) / hinv[first][first] * hinv[first][second]
    q[second] = to_grid(w[second])
    print(
        f"  column {first} -> {q[first]:.1f}, column {second} moved from"
        f" {W[second]} to {w[second]:.3f} -> {q[second]:.1f}"
    )
    return q


if __name__ == "__main__":
    h = hessian()
    rows = ", ".join("[" + ", ".join(f"{v:.2f}" for v in row) + "]" for row in h)
    print(f"H = 2 X^T X = [{rows}]")
    rtn = [to_grid(w) for w in W]
    print(f"weights {W}; round to nearest: {show(rtn)}, error {output_error(rtn):.4f}")
    print("GPTQ, columns in order (0, 1):")
    q = gptq([0, 1])
    print(f"  {show(q)}, error {output_error(q):.4f}")
    order = sorted(range(2), key=lambda j: -h[j][j])
    print(f"GPTQ with act-order, largest H diagonal first {tuple(order)}:")
    q = gptq(order)
    print(f"  {show(q)}, error {output_error(q):.4f}")
