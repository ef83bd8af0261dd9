#!/usr/bin/env python3
"""Distributed-data-parallel training example for `sparkctl launch`.

Each rank trains the same small MLP on its own shard of a synthetic,
deterministic regression task (a fixed "teacher" function).  Because the shards
differ, the ranks only stay in step if DistributedDataParallel averages their
gradients, so the run checks the whole path: rendezvous, the collective
backend (NCCL on GPUs, Gloo on CPU) and the network between the nodes.

At the end every rank prints a sha256 of its parameters; the run exits 0 only
if all ranks hold identical parameters and the loss (averaged over all ranks)
has fallen to a small fraction of where it started.

Rendezvous is env:// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT),
as set by `sparkctl launch` or by torchrun.  With none of them set it runs as a
single process.  Works with PyTorch 1.13 (Debian 12's python3-torch) and 2.x.
"""

import argparse
import datetime
import gc
import hashlib
import os
import sys
import threading

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

IN_DIM = 8
HIDDEN = 64
# Every rank must build the same teacher; the data seed varies per rank.
TEACHER_SEED = 1234
DATA_SEED_STRIDE = 1000003


def say(line, stream=None):
    # One write per line: print() issues the text and the newline as two
    # writes, which interleave when several ranks share one terminal.
    stream = stream or sys.stdout
    stream.write(line + "\n")
    stream.flush()


def parse_args():
    p = argparse.ArgumentParser(
        description="Train a small MLP with DistributedDataParallel on synthetic "
        "data and check that all ranks end with identical parameters.",
        epilog="Rendezvous comes from RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR "
        "and MASTER_PORT (set by `sparkctl launch` or torchrun). "
        "Exit status: 0 converged with identical parameters on all ranks; "
        "1 not converged, parameters differ, or an error during training; "
        "2 rendezvous or setup failed.")
    p.add_argument("--backend", choices=["nccl", "gloo"], default=None,
                   help="collective backend (default: nccl if CUDA is available, "
                   "else gloo)")
    p.add_argument("--steps", type=int, default=200,
                   help="training steps (default: %(default)s)")
    p.add_argument("--lr", type=float, default=0.02,
                   help="Adam learning rate (default: %(default)s)")
    p.add_argument("--batch", type=int, default=64,
                   help="samples per rank per step (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0,
                   help="base seed for model and data (default: %(default)s)")
    p.add_argument("--log-every", type=int, default=50, metavar="N",
                   help="print the loss every N steps (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="rendezvous/collective timeout, so a broken setup fails "
                   "instead of hanging (default: %(default)s)")
    p.add_argument("--target", type=float, default=0.02, metavar="RATIO",
                   help="converged if final loss < RATIO * initial loss "
                   "(default: %(default)s)")
    args = p.parse_args()
    if args.steps < 1 or args.batch < 1 or args.log_every < 1:
        p.error("--steps, --batch and --log-every must be positive")
    if args.timeout <= 0:
        p.error("--timeout must be positive")
    return args


def teacher(x, w_lin, w_sin):
    # Mostly linear with a mild nonlinearity: something for the MLP to learn,
    # yet easy enough that 200 steps take the loss well below --target.
    return x @ w_lin + 0.3 * torch.sin(x @ w_sin)


def make_model():
    return nn.Sequential(nn.Linear(IN_DIM, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))


def params_sha256(module):
    # Hash the raw float32 bytes in parameter order.  Going through a uint8
    # view avoids needing numpy, which pip's torch 2.x does not require.
    h = hashlib.sha256()
    for p in module.parameters():
        t = p.detach().to("cpu", torch.float32).contiguous().view(-1)
        h.update(bytes(t.view(torch.uint8).tolist()))
    return h.hexdigest()


# Every tensor handed to a collective stays referenced until the process group
# is gone.  Gloo's worker threads drop their reference after the collective
# completes; if that was the last one, freeing the tensor's Python object
# needs the GIL, and PyTorch 1.13 can deadlock at exit when the main thread
# holds the GIL while destroying the group (pytorch/pytorch#56297).
_collective_tensors = []


def pinned(t):
    _collective_tensors.append(t)
    return t


def mean_over_ranks(value, device, world):
    t = pinned(torch.tensor([value], dtype=torch.float64, device=device))
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.item() / world


def gather_digests(digest, device, world):
    # 32-byte tensors rather than all_gather_object: no pickling, and the
    # same code works on Gloo and NCCL.
    mine = pinned(torch.tensor(list(bytes.fromhex(digest)), dtype=torch.uint8,
                               device=device))
    gathered = pinned([torch.empty_like(mine) for _ in range(world)])
    dist.all_gather(gathered, mine)
    return [bytes(t.cpu().tolist()).hex() for t in gathered]


def train(args, rank, world, local_rank, device):
    """Train; return (initial loss, final loss, every rank's digest)."""
    # Same teacher on every rank; different data per rank, so the gradient
    # averaging is what keeps the replicas equal.
    g = torch.Generator().manual_seed(TEACHER_SEED)
    w_lin = (torch.randn(IN_DIM, 1, generator=g) / IN_DIM ** 0.5).to(device)
    w_sin = (torch.randn(IN_DIM, 1, generator=g) / IN_DIM ** 0.5).to(device)
    data_gen = torch.Generator().manual_seed(args.seed + DATA_SEED_STRIDE * (rank + 1))

    def batch():
        # Generate on CPU with a CPU generator: reproducible on any device.
        x = torch.randn(args.batch, IN_DIM, generator=data_gen).to(device)
        return x, teacher(x, w_lin, w_sin)

    # A fixed evaluation set per rank measures progress without batch noise.
    eval_x, eval_y = batch()

    # Identical init everywhere (DDP also broadcasts rank 0's parameters).
    torch.manual_seed(args.seed)
    model = DDP(make_model().to(device),
                device_ids=[local_rank] if device.type == "cuda" else None)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()

    def eval_loss():
        with torch.no_grad():
            # Evaluate the wrapped module: a forward through DDP prepares
            # for a backward (and may sync buffers) that this does not need.
            return loss_fn(model.module(eval_x), eval_y).item()

    initial = mean_over_ranks(eval_loss(), device, world)
    if rank == 0:
        say("initial loss %.6f" % initial)

    for step in range(1, args.steps + 1):
        x, y = batch()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()  # DDP all-reduces (averages) the gradients here
        opt.step()
        if step % args.log_every == 0 or step == args.steps:
            say("step %d loss %.6f" % (step, loss.item()))

    digest = params_sha256(model.module)
    say("params sha256 %s" % digest)
    digests = gather_digests(digest, device, world)
    final = mean_over_ranks(eval_loss(), device, world)
    return initial, final, digests


def main():
    args = parse_args()

    # Alone (no launcher), behave as a world of one so the script still runs.
    if "WORLD_SIZE" not in os.environ:
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    if backend == "nccl":
        if not torch.cuda.is_available():
            say("error: --backend nccl needs CUDA, which is not available",
                sys.stderr)
            return 2
        if local_rank >= torch.cuda.device_count():
            say("error: LOCAL_RANK %d but only %d GPU(s) on this node"
                % (local_rank, torch.cuda.device_count()), sys.stderr)
            return 2
        # Pin the GPU before init so NCCL uses it, not cuda:0 on every rank.
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
        # Several ranks share a node's cores; one thread each avoids
        # oversubscription, which makes CPU runs many times slower.
        torch.set_num_threads(1)

    master = "%s:%s" % (os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"))
    say("rank %d/%d local_rank %d backend %s device %s torch %s master %s"
        % (rank, world, local_rank, backend, device, torch.__version__, master))

    # The default timeout is 30 minutes; a missing rank should fail quickly.
    failed = "error: rendezvous at %s failed (world size %d, timeout %gs): " % (
        master, world, args.timeout)

    def give_up():
        # PyTorch 1.13's rank 0 waits out the timeout twice (its store waits
        # for the other ranks, then Gloo waits for their addresses); keep the
        # whole rendezvous within the timeout and a little slack.
        say(failed + "not all ranks joined", sys.stderr)
        os._exit(2)

    watchdog = threading.Timer(args.timeout + 2, give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        dist.init_process_group(backend, init_method="env://",
                                timeout=datetime.timedelta(seconds=args.timeout))
    except (RuntimeError, OSError) as e:
        # Store timeouts are TimeoutError (an OSError) in 1.13 and
        # RuntimeError subclasses in 2.x; either way, one clear line.
        say(failed + (str(e).strip().splitlines() or [type(e).__name__])[0],
            sys.stderr)
        return 2
    finally:
        watchdog.cancel()

    initial, final, digests = train(args, rank, world, local_rank, device)
    differ = [r for r, d in enumerate(digests) if d != digests[0]]
    converged = final < args.target * initial

    if rank == 0:
        if differ:
            say("parameters differ: ranks %s do not match rank 0"
                % ",".join(map(str, differ)))
        else:
            say("identical parameters on all %d ranks" % world)
        say("final loss %.6f (initial %.6f, ratio %.4f)"
            % (final, initial, final / initial if initial else 0.0))
        if not converged:
            say("did not converge (target ratio %g)" % args.target)

    # Tear down in order while the pinned tensors are alive: the DDP model
    # (freed with train()'s frame; collect any cycles), then the group.
    gc.collect()
    dist.destroy_process_group()
    del _collective_tensors[:]
    # Every rank saw the same digests and reduced loss, so all ranks exit
    # alike and the launcher gets a consistent result.
    return 1 if differ or not converged else 0


if __name__ == "__main__":
    sys.exit(main())
