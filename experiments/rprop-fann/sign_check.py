"""Which weights' gradients have another sign in FANN 2.2 than in wulf.

    sign_check.py exact|fann WEIGHTS DATA.train

WEIGHTS is a wulf weights file (a sigmoid net with biases), DATA a FANN data file. For each
weight the gradient of the mse over the whole set is computed twice:
- as wulf computes it, with the sigmoid's derivative y (1 - y) exact, or (fann: wulf's
  --sigmoid-derivative fann) taken at y clipped to [0.01, 0.99];
- as FANN 2.2 computes it: the derivative at y clipped to [0.01, 0.99]
  (fann_activation_derived), and each neuron's weighted sum clamped to [-150, 150] before
  the sigmoid (fann_run), so that a unit deep in saturation puts out e^-150, not e^-600.
Prints the indices (wulf's order) of the weights whose two gradients differ in sign, one
per line: where RPROP's step goes one way in wulf and the other in FANN.
"""
import math
import sys


def read_weights(path):
    lines = open(path).read().split("\n")
    layers = [int(x) for x in next(l for l in lines if l.startswith("layers ")).split()[1:]]
    values = [float(x) for x in lines[lines.index("values") + 1:] if x]
    return layers, values


def read_fann(path):
    numbers = open(path).read().split()
    n, n_in, n_out = int(numbers[0]), int(numbers[1]), int(numbers[2])
    at = 3
    for _ in range(n):
        x = [float(v) for v in numbers[at:at + n_in]]
        t = [float(v) for v in numbers[at + n_in:at + n_in + n_out]]
        at += n_in + n_out
        yield x, t


def main(mode, weights_path, data_path):
    layers, w = read_weights(weights_path)
    # Per layer l: W (n_l x n_{l-1}, column-major) at offset, then b.
    offsets, at = [], 0
    for l in range(1, len(layers)):
        offsets.append(at)
        at += layers[l] * (layers[l - 1] + 1)
    ours, fanns = [0.0] * len(w), [0.0] * len(w)

    def sigmoid(z, clamp):
        if clamp:
            z = min(max(z, -150.0), 150.0)
        return 1 / (1 + math.exp(-z)) if z > -700 else 0.0

    def forward(x, clamp):
        acts = [x]
        for l in range(1, len(layers)):
            o, n, m = offsets[l - 1], layers[l], layers[l - 1]
            prev = acts[-1]
            acts.append([sigmoid(sum(w[o + k * n + j] * prev[k] for k in range(m)) + w[o + n * m + j], clamp)
                         for j in range(n)])
        return acts

    for x, t in read_fann(data_path):
        for grad, clip, clamp in ((ours, mode == "fann", False), (fanns, True, True)):
            acts = forward(x, clamp)
            d = lambda y: (min(max(y, 0.01), 0.99) if clip else y) * (1 - (min(max(y, 0.01), 0.99) if clip else y))  # noqa: E731
            delta = [(y - tj) * d(y) for y, tj in zip(acts[-1], t)]
            for l in range(len(layers) - 1, 0, -1):
                o, n, m = offsets[l - 1], layers[l], layers[l - 1]
                prev = acts[l - 1]
                for j in range(n):
                    for k in range(m):
                        grad[o + k * n + j] += delta[j] * prev[k]
                    grad[o + n * m + j] += delta[j]
                if l > 1:
                    delta = [sum(w[o + k * n + j] * delta[j] for j in range(n)) * d(prev[k]) for k in range(m)]
    for i, (a, b) in enumerate(zip(ours, fanns)):
        if (a > 0) != (b > 0):
            print(i)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("exact", "fann"):
        sys.exit("usage: sign_check.py exact|fann WEIGHTS DATA.train")
    main(sys.argv[1], sys.argv[2], sys.argv[3])
