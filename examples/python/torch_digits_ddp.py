"""torch_digits.py's model, data and schedule under torch DDP (gloo), for
comparison: 3 processes on this machine, `torch.save` after every epoch
and a resume from the last one saved.

    torch_digits_ddp.py [--checkpoint-dir DIR] [--epochs N]
"""

import argparse
import hashlib
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

WORLD = 3


def train(rank, args, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16
    y = torch.tensor(digits.target)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Dropout(0.1), torch.nn.Linear(128, 10))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10, gamma=0.5)
    data = TensorDataset(x[:1500], y[:1500])
    sampler = DistributedSampler(data, WORLD, rank)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    path = args.checkpoint_dir and "%s/rank%d.pt" % (args.checkpoint_dir, rank)
    first = 0
    if path and os.path.exists(path):
        saved = torch.load(path)
        for name, obj in (("model", model), ("optimizer", optimizer),
                          ("scheduler", scheduler)):
            obj.load_state_dict(saved[name])
        torch.set_rng_state(saved["rng"])
        first = saved["epoch"] + 1
    times, saves = [], []
    for epoch in range(first, args.epochs):
        start = time.perf_counter()
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            optimizer.zero_grad()
            F.cross_entropy(ddp(xb), yb).backward()
            optimizer.step()
        scheduler.step()
        saved_at = time.perf_counter()
        if path:
            torch.save({"model": model.state_dict(), "epoch": epoch,
                        "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(),
                        "rng": torch.get_rng_state()}, path + ".tmp")
            os.replace(path + ".tmp", path)
        saves.append(time.perf_counter() - saved_at)
        times.append(time.perf_counter() - start)
    if rank == 0:
        model.eval()
        accuracy = (model(x[1500:]).argmax(1) == y[1500:]).float().mean()
        digest = hashlib.sha256()
        for key, tensor in model.state_dict().items():
            digest.update(key.encode() + tensor.numpy().tobytes())
        print("epoch_ms=%s" % ",".join("%.2f" % (t * 1e3) for t in times))
        print("save_ms=%s" % ",".join("%.2f" % (t * 1e3) for t in saves))
        print("accuracy=%.4f" % accuracy.item())
        print("weights_digest=%s" % digest.hexdigest())
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint-dir")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--port", type=int, default=29517)
    args = parser.parse_args()
    if args.checkpoint_dir:
        os.makedirs(args.checkpoint_dir, exist_ok=True)
    mp.spawn(train, (args, args.port), nprocs=WORLD)


if __name__ == "__main__":
    main()
