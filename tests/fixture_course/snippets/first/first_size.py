"""Bytes per token of a tiny model: the module the fixture course's later lessons import."""


def bytes_per_token(layers: int, width: int) -> int:
    if layers <= 0 or width <= 0:
        raise ValueError("layers and width must be positive")
    return 2 * layers * width


if __name__ == "__main__":
    print(f"{bytes_per_token(2, 8)} bytes per token")
