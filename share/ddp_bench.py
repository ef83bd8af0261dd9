#!/usr/bin/env python3
"""The rank of 'sparkctl bench ddp': a synthetic-data DistributedDataParallel
training loop that times each step and the gradient all-reduce inside it.

sparkctl runs it through 'sparkctl launch' (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR, MASTER_PORT); rank 0 prints one line "sparkctl-ddp JSON" with
the per-step figures, which sparkctl reads.  Times are in microseconds:

  step_us     forward, backward (with DDP's bucketed gradient all-reduce) and
              the optimizer step, the ranks synchronised before and after;
  comm_us     per timed step, the time during which a gradient bucket's
              all-reduce was in flight: from the communication hook's call
              for the bucket to its future's completion, the union of the
              buckets' intervals (buckets in flight together count once);
  compute_us  the same step under DDP's no_sync(): no all-reduce at all;
              these steps and the ones above are taken in turns.

Exit status: 0 done; 3 torch, or the collective backend, is missing (the
line on stderr names it); 2 rendezvous failed; 1 any other error.
"""

import argparse
import datetime
import gc
import json
import os
import sys
import threading
import time

MISSING = 3


def say(line, stream=None):
    # One write per line: the ranks of a node share the terminal.
    stream = stream or sys.stdout
    stream.write(line + "\n")
    stream.flush()


def missing(what):
    say("sparkctl-ddp: missing: %s" % what, sys.stderr)
    return MISSING


def parse_args():
    p = argparse.ArgumentParser(description="A rank of 'sparkctl bench ddp'.")
    p.add_argument("--model", choices=["mlp", "transformer"], default="mlp")
    p.add_argument("--width", type=int, required=True)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--bucket-mb", type=int, default=25)
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--timeout", type=float, default=120.0)
    return p.parse_args()


def build_model(nn, args):
    if args.model == "mlp":
        layers = []
        for i in range(args.layers):
            layers.append(nn.Linear(args.width, args.width))
            if i + 1 < args.layers:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)
    layer = nn.TransformerEncoderLayer(args.width, max(1, args.width // 8),
                                       dim_feedforward=4 * args.width,
                                       dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, args.layers)


def union_us(intervals):
    """The length of the union of (start, end) intervals."""
    total, reach = 0.0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


class Clock:
    """Timestamps in microseconds: CUDA events on a GPU (an all-reduce's
    future completes on the stream, not on the host), perf_counter on CPU."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device.type == "cuda"
        self.origin = None
        self.marks = []

    def mark(self):
        if self.cuda:
            e = self.torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
            return e
        return time.perf_counter()

    def start(self):
        self.origin = self.mark()

    def us(self, m):
        if self.cuda:
            return self.origin.elapsed_time(m) * 1000.0
        return (m - self.origin) * 1e6

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()


def run(args, torch, dist, nn, DDP):
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        if not dist.is_nccl_available():
            return missing("NCCL (this torch was built without it)")
        backend = "nccl"
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        if not dist.is_gloo_available():
            return missing("gloo (this torch was built without it)")
        backend = "gloo"
        device = torch.device("cpu")
        # Ranks share a node's cores: one thread each, as 'sparkctl launch' sets.
        torch.set_num_threads(1)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32

    watchdog = threading.Timer(args.timeout + 2, lambda: (
        say("sparkctl-ddp: rendezvous at %s:%s failed: not all %d ranks joined"
            % (os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"), world),
            sys.stderr), os._exit(2)))
    watchdog.daemon = True
    watchdog.start()
    try:
        dist.init_process_group(backend, init_method="env://",
                                timeout=datetime.timedelta(seconds=args.timeout))
    except (RuntimeError, OSError) as e:
        say("sparkctl-ddp: rendezvous failed: %s"
            % (str(e).strip().splitlines() or [type(e).__name__])[0], sys.stderr)
        return 2
    finally:
        watchdog.cancel()

    torch.manual_seed(0)
    model = build_model(nn, args).to(device=device, dtype=dtype)
    params = sum(p.numel() for p in model.parameters())
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    try:
        ddp = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None,
                  bucket_cap_mb=args.bucket_mb)
    except RuntimeError as e:
        # DDP's first collective (the broadcast of rank 0's parameters) is
        # where a backend without the data type says so.
        if args.dtype == "bf16" and "scalar type" in str(e):
            return missing("bfloat16 collectives in %s (torch %s): --dtype fp32 runs"
                           % (backend, torch.__version__))
        raise
    clock = Clock(torch, device)
    intervals = []
    buckets = [0]
    keep = []  # tensors handed to gloo stay referenced until the group ends

    def timed_allreduce(state, bucket):
        buf = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
        start = clock.mark()
        buf.div_(world)
        keep.append(buf)
        fut = dist.all_reduce(buf, async_op=True).get_future()

        def done(f):
            intervals.append((start, clock.mark()))
            return f.value()[0]
        buckets[0] += 1
        return fut.then(done)

    ddp.register_comm_hook(None, timed_allreduce)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4, momentum=0.9)
    g = torch.Generator().manual_seed(1000 + rank)
    shape = (args.batch, args.width) if args.model == "mlp" else (args.batch, args.seq, args.width)
    x = torch.randn(*shape, generator=g).to(device=device, dtype=dtype)
    y = torch.randn(*shape, generator=g).to(device=device, dtype=dtype)
    loss_fn = nn.MSELoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        loss.backward()
        opt.step()

    def one_step(no_sync):
        """One step: its time and its all-reduce time (the union of the buckets')."""
        del intervals[:]
        del keep[:]
        clock.sync()
        clock.start()
        begin = clock.mark()
        if no_sync:
            with ddp.no_sync():
                step()
        else:
            step()
        end = clock.mark()
        clock.sync()
        comm = union_us([(clock.us(a), clock.us(b)) for a, b in intervals])
        took = clock.us(end) - clock.us(begin)
        clock.marks = []
        return took, comm

    def timed(n):
        """n steps with DDP's all-reduce and n under no_sync(), in turns (the
        first of each pair alternating), so that load coming and going on
        the nodes falls on both alike: compute is subtracted from the step."""
        steps, comms, computes = [], [], []
        for i in range(n):
            for no_sync in ((False, True) if i % 2 == 0 else (True, False)):
                took, comm = one_step(no_sync)
                if no_sync:
                    computes.append(took)
                else:
                    steps.append(took)
                    comms.append(comm)
        return steps, comms, computes

    timed(args.warmup)
    dist.barrier()
    buckets[0] = 0
    step_us, comm_us, compute_us = timed(args.steps)
    per_step = buckets[0] // max(1, args.steps)
    dist.barrier()

    if rank == 0:
        say("sparkctl-ddp " + json.dumps({
            "world_size": world,
            "backend": backend,
            "device": device.type,
            "torch_version": torch.__version__,
            "model": args.model,
            "width": args.width,
            "layers": args.layers,
            "params": params,
            "grad_bytes": grad_bytes,
            "buckets": per_step,
            "batch_per_rank": args.batch,
            "step_us": [round(v, 1) for v in step_us],
            "comm_us": [round(v, 1) for v in comm_us],
            "compute_us": [round(v, 1) for v in compute_us],
        }, separators=(",", ":")))
    del ddp
    gc.collect()
    dist.destroy_process_group()
    del keep[:]
    return 0


def main():
    args = parse_args()
    try:
        import torch
        import torch.distributed as dist
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP
    except ImportError as e:
        return missing("torch for %s (%s; Debian: python3-torch)" % (sys.executable, e))
    if not dist.is_available():
        return missing("torch.distributed (this torch was built without it)")
    if "WORLD_SIZE" not in os.environ:
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
    return run(args, torch, dist, nn, DDP)


if __name__ == "__main__":
    sys.exit(main())
