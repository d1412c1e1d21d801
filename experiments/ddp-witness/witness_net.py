"""The net of experiments/ddp-witness: convolutions that take compute, fully connected layers
that take bytes.

Input 3x64x64, 10 classes. Forward flops per sample (a multiply-add 2 flops): the eight
convolutions 1.83e9, the three linear layers 1.4e7. Parameters: 8 133 642, 31.0 MiB of float32
gradients, in the backward pass's order

    fc3 (6 410 values), fc2 (267 264: with fc3 1.04 MiB, DDP's first bucket of 1 MiB),
    fc1 (6 816 160: 26.0 MiB, a bucket of its own under bucket_cap_mb 25),
    c8 .. c1 (1 043 808 together: 3.98 MiB).

So bucket_cap_mb 25 sends fc1 while the convolutions' backward pass still runs, a cap larger
than the net sends it with the convolutions at the end, and a cap of 1 cuts the convolutions
into buckets of about 1 MiB. No batch norm: DDP broadcasts no buffers in its forward pass.
"""
import torch
from torch import nn

SHAPE = (3, 64, 64)
CLASSES = 10


def build_net():
    def conv(i, o):
        return [nn.Conv2d(i, o, 3, padding=1), nn.ReLU(inplace=True)]

    return nn.Sequential(
        *conv(3, 64), *conv(64, 64), *conv(64, 64), nn.MaxPool2d(2),        # 64x64 -> 32x32
        *conv(64, 128), *conv(128, 128), *conv(128, 128), nn.MaxPool2d(2),  # -> 16x16
        *conv(128, 256), *conv(256, 256), nn.MaxPool2d(2),                  # -> 8x8
        nn.Flatten(),
        nn.Linear(256 * 8 * 8, 416), nn.ReLU(inplace=True),
        nn.Linear(416, 640), nn.ReLU(inplace=True),
        nn.Linear(640, CLASSES))


def build_small_net():
    """The CTest cell's net: the same shape of work in about a tenth of the time (input 3x32x32,
    two convolutions), 4.2 MiB of gradients: fc1 (1 049 088 values: 4.0 MiB), fc2 and fc3
    (33 290: the first bucket is the rest of the net)."""
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 8 * 8, 256), nn.ReLU(inplace=True),
        nn.Linear(256, 128), nn.ReLU(inplace=True),
        nn.Linear(128, CLASSES))


SMALL_SHAPE = (3, 32, 32)


def net_and_shape(name):
    """("witness" | "small") -> (nn.Module, input shape of one sample)."""
    if name == "witness":
        return build_net(), SHAPE
    if name == "small":
        return build_small_net(), SMALL_SHAPE
    raise ValueError("no net %r (witness or small)" % name)
