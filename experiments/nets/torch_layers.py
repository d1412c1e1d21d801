#!/usr/bin/env python3
"""Print the layer file (platforms/nets/README.md) of a PyTorch model to stdout.

    torch_layers.py MODEL SHAPE [--name NAME] [--samples TRAIN TEST] [--source TEXT]... [--train]

MODEL is a torchvision model name (resnet50; built with weights=None, nothing is downloaded)
or MODULE:FUNCTION, a function of an importable module that returns an nn.Module. SHAPE is one
sample's input, e.g. 3x224x224 (`inputs` is its product; `outputs` is the size of one
sample's output, the first if the model returns several).

The script runs one forward pass under torch.no_grad(), batch 1 in eval mode (with --train:
batch 2 in training mode, so that parts run only in training, such as Inception V3's
auxiliary classifier, are seen), with forward hooks on the leaf modules. It prints a `layer`
for every call of a leaf module that has parameters and every call of a pooling module, in
the order of the calls. NAME is the module's qualified name, made unique by @2, @3, ... when
it is called again (not #2: `#` starts a comment in a layer file). The tensors are the
module's own parameters in named_parameters order; a parameter that an earlier layer already
listed (shared, tied) is not listed again. Backward flops are left to the format's default
(twice the forward). The flop conventions are CONVENTIONS below, which every file repeats.
Each --source line goes into the header as a comment. Needs PyTorch (Debian: python3-torch,
python3-torchvision); torch is imported only when the script runs.
"""
import argparse
import importlib
import math
import os
import re
import shlex
import sys

CONVENTIONS = """\
Forward flops per sample (a multiply-add is 2 flops):
  conv:      2 * output elements * (input channels / groups) * kernel area,
             + output elements if it has a bias
  linear:    2 * in_features * out_features * rows, + out_features * rows with a bias
             (rows: the product of a sample's leading dimensions, 1 for a CNN classifier)
  norm:      4 per output element (normalise: subtract the mean, divide by the deviation;
             then the affine scale and shift), whether batch, layer or group norm
  pool:      output elements * kernel area (max and average pooling modules);
             adaptive pooling: the input elements
  embedding: 0 (a lookup); other layers with parameters: 0 (unknown)
Not counted: activations, residual additions, dropout, concatenation, functional
(non-module) pooling, and anything else not done by a leaf module with parameters or a
pooling module. Backward flops: the format's default, twice the forward."""


def fail(message, code=2):
    print("torch_layers.py: " + message, file=sys.stderr)
    sys.exit(code)


def build(spec):
    if ":" in spec:
        module, function = spec.split(":", 1)
        sys.path.insert(0, os.getcwd())
        return getattr(importlib.import_module(module), function)()
    import torchvision
    if spec not in torchvision.models.list_models():
        fail("%s: not a torchvision model (or give MODULE:FUNCTION)" % spec)
    return torchvision.models.get_model(spec, weights=None)


def first_tensor(x, torch):
    """The first tensor of a module's output (a tensor, a tuple or list, a namedtuple)."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (tuple, list)):
        for item in x:
            found = first_tensor(item, torch)
            if found is not None:
                return found
    return None


def kind_and_flops(m, in_shape, out_shape, nn):
    """The layer's kind and forward flops per sample (shapes without the batch)."""
    out_el = math.prod(out_shape)
    if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        flops = 2 * out_el * (m.in_channels // m.groups) * math.prod(m.kernel_size)
        return "conv", flops + (out_el if m.bias is not None else 0)
    if isinstance(m, nn.Linear):
        rows = math.prod(out_shape[:-1])
        flops = 2 * m.in_features * m.out_features * rows
        return "linear", flops + (m.out_features * rows if m.bias is not None else 0)
    if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm)):
        return "norm", 4 * out_el
    if isinstance(m, (nn.modules.pooling._AdaptiveAvgPoolNd, nn.modules.pooling._AdaptiveMaxPoolNd)):
        return "pool", math.prod(in_shape)
    if isinstance(m, (nn.modules.pooling._MaxPoolNd, nn.modules.pooling._AvgPoolNd)):
        k = m.kernel_size
        area = math.prod(k) if isinstance(k, (tuple, list)) else k ** (len(out_shape) - 1)
        return "pool", out_el * area
    if isinstance(m, (nn.Embedding, nn.EmbeddingBag)):
        return "embedding", 0
    print("torch_layers.py: %s: flops not known, 0 written" % type(m).__name__, file=sys.stderr)
    return "other", 0


def layer_modules(model, nn):
    """The modules that are a file's layers: the leaf modules with parameters of their own, and
    the pooling modules."""
    pools = (nn.modules.pooling._MaxPoolNd, nn.modules.pooling._AvgPoolNd,
             nn.modules.pooling._AdaptiveAvgPoolNd, nn.modules.pooling._AdaptiveMaxPoolNd)
    return [m for m in model.modules()
            if not any(True for _ in m.children()) and (
                any(True for _ in m.parameters(recurse=False)) or isinstance(m, pools))]


def call_names(model, called):
    """The layer names of a forward pass's calls of layer modules, in call order: each module's
    qualified name, blanks and # made _, with @2, @3, ... for its later calls."""
    names = {m: n for n, m in model.named_modules()}
    out, times = [], {}
    for m in called:
        name = re.sub(r"[\s#]", "_", names[m]) or type(m).__name__
        times[name] = times.get(name, 0) + 1
        out.append(name + ("@%d" % times[name] if times[name] > 1 else ""))
    return out


def main():
    ap = argparse.ArgumentParser(description="Print the layer file of a PyTorch model.",
                                 allow_abbrev=False)
    ap.add_argument("model", help="torchvision model name, or MODULE:FUNCTION")
    ap.add_argument("shape", help="one sample's input shape, e.g. 3x224x224")
    ap.add_argument("--name", help="the net's name (default: MODEL)")
    ap.add_argument("--samples", nargs=2, type=int, metavar=("TRAIN", "TEST"))
    ap.add_argument("--source", action="append", default=[], metavar="TEXT",
                    help="a header comment line (repeatable)")
    ap.add_argument("--train", action="store_true",
                    help="run batch 2 in training mode (heads used only in training)")
    a = ap.parse_args()
    if not re.fullmatch(r"[1-9][0-9]*(x[1-9][0-9]*)*", a.shape):
        fail("%s: SHAPE is sizes joined by x, e.g. 3x224x224" % a.shape)
    shape = [int(s) for s in a.shape.split("x")]
    try:
        import torch
        from torch import nn
    except ImportError:
        fail("needs PyTorch (Debian: python3-torch)")

    model = build(a.model)
    model.train(a.train)
    batch = 2 if a.train else 1
    calls = []

    def hook(module, inputs, output):
        x, y = first_tensor(inputs, torch), first_tensor(output, torch)
        calls.append((module, tuple(x.shape[1:]) if x is not None else (), tuple(y.shape[1:])))

    for m in layer_modules(model, nn):
        m.register_forward_hook(hook)
    torch.manual_seed(0)
    with torch.no_grad():
        out = first_tensor(model(torch.randn(batch, *shape)), torch)

    layers, seen = [], set()
    for (m, in_shape, out_shape), name in zip(calls, call_names(model, [c[0] for c in calls])):
        kind, flops = kind_and_flops(m, in_shape, out_shape, nn)
        tensors = []
        for _, p in m.named_parameters(recurse=False):
            if id(p) not in seen:
                seen.add(id(p))
                tensors.append(list(p.shape) or [1])
        layers.append((name, kind, flops, tensors))

    listed = sum(math.prod(t) for layer in layers for t in layer[3])
    total = sum(p.numel() for p in model.parameters())
    if listed != total:
        print("torch_layers.py: %d of the model's %d parameters were not used in the forward "
              "pass and are not listed" % (total - listed, total), file=sys.stderr)
    try:
        import torchvision
        versions = "torch %s, torchvision %s" % (torch.__version__, torchvision.__version__)
    except ImportError:
        versions = "torch %s" % torch.__version__
    argv, rest = [os.path.relpath(sys.argv[0])], sys.argv[1:]
    while rest:  # the command less its --source options, whose lines are printed above it
        word = rest.pop(0)
        if word == "--source":
            rest = rest[1:]
        elif not word.startswith("--source="):
            argv.append(word)
    for line in a.source:
        print(("# " + line).rstrip())
    print("# Printed by: %s" % shlex.join(argv))
    if a.source:
        print("#   with --source giving each of the %d lines above" % len(a.source))
    print("#   (%s; %s mode, batch %d, under torch.no_grad())"
          % (versions, "training" if a.train else "eval", batch))
    print("#")
    for line in CONVENTIONS.splitlines():
        print(("# " + line).rstrip())
    print("wulf-layers 1")
    print("name %s" % (a.name or a.model))
    if a.samples:
        print("samples %d %d" % tuple(a.samples))
    print("inputs %d" % math.prod(shape))
    print("outputs %d" % (out[0].numel() if out is not None else 1))
    for name, kind, flops, tensors in layers:
        print(" ".join(["layer", name, kind, str(flops)] + ["x".join(map(str, t)) for t in tensors]))
    print("# %d parameters, %d forward flops per sample, %d layers, %d tensors"
          % (listed, sum(layer[2] for layer in layers), len(layers), len(seen)))


if __name__ == "__main__":
    main()
