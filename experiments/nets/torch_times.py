#!/usr/bin/env python3
"""Print the measured `time` and `step` lines of a PyTorch model's layer file.

    torch_times.py MODEL SHAPE --device NAME [--batch B] [--warmup W] [--repeat N]
                   [--concurrent K] [--lr LR]

MODEL and SHAPE as torch_layers.py takes them; its layers are the same modules under the same
names, so that the lines printed here can follow the file it prints (`>>`): each `time` line
gives one layer's forward and backward seconds per sample on the device NAME (a platform
host's wulf:device), the `step` line the seconds of one optimizer step.

How it measures: one process, one compute thread (torch.set_num_threads(1)), the model in
training mode on a fixed batch of B random samples, trained as a training loop trains it:
zero_grad, forward, cross-entropy loss against random classes, backward, SGD step. Every
layer module gets a forward pre-hook (the time its forward starts) and, on its input when that
needs a gradient, a tensor hook (the time the gradient of its input is made: its backward is
done). A layer's forward is from its start to the next layer's start (the activations after it
are its own; the last layer's runs to the loss), its backward from the end of the backward of
the layer after it (for the last, from the call of backward) to the end of its own (for the
first, whose input needs no gradient, the return of backward). So the layers' times add up to
the whole forward and backward pass, nothing left between them. `step` is zero_grad and the
SGD step. Each figure is the median over N timed iterations after W warm-ups, per sample
(over B) for the layers. Every figure is printed with the loop's own time without hooks, to
show what the hooks cost.

The timed iterations with hooks and without alternate, one of each in turn, so that both see
the same machine; where the layers' sum and the loop without hooks differ by more than
--tolerance (a fraction, 0.1), nothing is printed and the script fails: the layers' times would
not be the loop's.

--concurrent K: K - 1 more processes train the same model beside the measured one, each with
one thread, for the compute of K ranks that share this machine's cores (the testbed of K
ranks on fewer cores). The measurement starts once each of them has trained an iteration, and
fails unless each trained on to its end (a neighbour still starting, or one that died, leaves
the measured process a core to itself).

Needs PyTorch (Debian: python3-torch).
"""
import argparse
import math
import multiprocessing
import os
import re
import shlex
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_layers  # noqa: E402  (the layers and their names)


def fail(message):
    print("torch_times.py: " + message, file=sys.stderr)
    sys.exit(2)


def setup(model_spec, shape, batch, lr, seed):
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.manual_seed(seed)
    model = torch_layers.build(model_spec)
    model.train(True)
    x = torch.randn(batch, *shape)
    out = torch_layers.first_tensor(model(x), torch)
    y = torch.randint(0, out.shape[-1], (batch,))
    return torch, model, x, y, torch.optim.SGD(model.parameters(), lr=lr)


def busy(model_spec, shape, batch, lr, stop, trained):
    """A neighbour: trains its own copy until stop is set, counting its iterations in trained."""
    torch, model, x, y, opt = setup(model_spec, shape, batch, lr, seed=2)
    loss_fn = torch.nn.CrossEntropyLoss()
    while not stop.is_set():
        opt.zero_grad()
        out = torch_layers.first_tensor(model(x), torch)
        loss_fn(out, y).backward()
        opt.step()
        with trained.get_lock():
            trained.value += 1


def counts(trained):
    return [t.value for t in trained]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("model", help="torchvision model name, or MODULE:FUNCTION")
    ap.add_argument("shape", help="one sample's input shape, e.g. 3x224x224")
    ap.add_argument("--device", required=True, help="the device name the lines give (a host's wulf:device)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--concurrent", type=int, default=1)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--tolerance", type=float, default=0.1,
                    help="the most the layers' sum may differ from the loop without hooks, as a fraction")
    a = ap.parse_args()
    if not re.fullmatch(r"[1-9][0-9]*(x[1-9][0-9]*)*", a.shape):
        fail("%s: SHAPE is sizes joined by x, e.g. 3x224x224" % a.shape)
    if not re.fullmatch(r"[^\s#]+", a.device):
        fail("--device %r: one word without # (a host's wulf:device)" % a.device)
    if a.batch < 1 or a.repeat < 1 or a.warmup < 0 or a.concurrent < 1:
        fail("--batch, --repeat and --concurrent must be at least 1, --warmup at least 0")
    if not 0 < a.tolerance < 1:
        fail("--tolerance %g: a fraction above 0 and below 1" % a.tolerance)
    shape = [int(s) for s in a.shape.split("x")]
    try:
        import torch  # noqa: F401
    except ImportError:
        fail("needs PyTorch (Debian: python3-torch)")

    stop = multiprocessing.Event()
    trained = [multiprocessing.Value("q", 0) for _ in range(a.concurrent - 1)]
    neighbours = [multiprocessing.Process(target=busy, args=(a.model, shape, a.batch, a.lr, stop, t), daemon=True)
                  for t in trained]
    for n in neighbours:
        n.start()
    try:
        while any(c == 0 for c in counts(trained)):  # every neighbour under way
            if not all(n.is_alive() for n in neighbours):
                fail("a neighbour process (--concurrent) died before its first iteration")
            time.sleep(0.05)
        torch, model, x, y, opt = setup(a.model, shape, a.batch, a.lr, seed=1)
        from torch import nn
        loss_fn = nn.CrossEntropyLoss()
        clock = time.perf_counter
        starts, grads, called = {}, {}, []
        hooked = [True]  # the hooks time this iteration

        def pre_hook(module, inputs):
            if not hooked[0]:
                return
            k = len(called)
            called.append(module)
            starts[k] = clock()
            x_in = torch_layers.first_tensor(inputs, torch)
            if x_in is not None and x_in.requires_grad:
                x_in.register_hook(lambda g, k=k: grads.__setitem__(k, clock()))

        handles = [m.register_forward_pre_hook(pre_hook) for m in torch_layers.layer_modules(model, nn)]

        def iteration(with_hooks):
            hooked[0] = with_hooks
            called.clear(), starts.clear(), grads.clear()
            t0 = clock()
            opt.zero_grad()
            t1 = clock()
            out = torch_layers.first_tensor(model(x), torch)
            loss = loss_fn(out, y)
            t2 = clock()
            loss.backward()
            t3 = clock()
            opt.step()
            t4 = clock()
            return t0, t1, t2, t3, t4

        fwd, bwd, steps = [], [], []
        loop = []  # the same loop without hooks, an iteration after each hooked one
        names = None
        for i in range(a.warmup + a.repeat):
            if i == a.warmup:
                at_start = counts(trained)
            t0, t1, t2, t3, t4 = iteration(True)
            if i < a.warmup:
                iteration(False)
                continue
            n = len(called)
            f = [(starts[k + 1] if k + 1 < n else t2) - (starts[k] if k > 0 else t1) for k in range(n)]
            b = []
            for k in range(n):
                end = grads.get(k, t3) if k > 0 else t3
                begin = grads[k + 1] if k + 1 < n else t2
                b.append(end - begin)
            fwd.append(f), bwd.append(b), steps.append((t1 - t0) + (t4 - t3))
            if names is None:
                names = torch_layers.call_names(model, called)
            t0, _, _, _, t4 = iteration(False)
            loop.append(t4 - t0)
        at_end = counts(trained)
        for h in handles:
            h.remove()
        for k, (s0, s1) in enumerate(zip(at_start, at_end)):
            if s1 <= s0 or not neighbours[k].is_alive():
                fail("neighbour %d of %d (--concurrent) stopped training while the layers were timed (%d "
                     "iterations then %d): the measured process had a core it will not have" %
                     (k + 1, len(neighbours), s0, s1))
    finally:
        stop.set()
        for n in neighbours:
            n.join(timeout=60)

    med = statistics.median
    f_med = [med(it[k] for it in fwd) for k in range(len(names))]
    b_med = [med(it[k] for it in bwd) for k in range(len(names))]
    step = med(steps)
    hooked = sum(f_med) + sum(b_med) + step
    differ = hooked / med(loop) - 1
    if abs(differ) > a.tolerance:
        fail("the layers' times add up to %.6f s an iteration, the loop without hooks took %.6f s (%+.1f%%, "
             "more than --tolerance %g): the machine's speed changed while they alternated; measure again on an "
             "idle machine" % (hooked, med(loop), 100 * differ, a.tolerance))
    print("# Measured by: %s" % shlex.join([os.path.relpath(sys.argv[0])] + sys.argv[1:]))
    print("#   (torch %s, one thread, training mode, batch %d, SGD; medians of %d iterations after %d "
          "warm-ups%s)" % (torch.__version__, a.batch, a.repeat, a.warmup,
                           "; %d processes training at once" % a.concurrent if a.concurrent > 1 else ""))
    print("#   an iteration: %.6f s by the layers' times and the step, %.6f s by the loop without hooks "
          "(%+.2f%%)" % (hooked, med(loop), 100 * differ))
    for name, f, b in zip(names, f_med, b_med):
        print("time %s %s %.9g %.9g" % (a.device, name, f / a.batch, b / a.batch))
    print("step %s %.9g" % (a.device, step))


if __name__ == "__main__":
    main()
