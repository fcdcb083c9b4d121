"""PyTorch CPU latency of a torchvision network: random weights, eval mode, batch 1,
no autograd, the given threads; `warmup` untimed passes, then `repeat` timed ones.

usage: /usr/bin/python3 bench/peers/torch_network.py NAME SIZE THREADS WARMUP REPEAT
prints one JSON line: {"torch": version, "threads": n, "timesMs": [...]}
"""
import json, sys, time

name, size, threads, warmup, repeat = sys.argv[1], *map(int, sys.argv[2:6])
import torch, torchvision

torch.set_num_threads(threads)
torch.manual_seed(0)
model = getattr(torchvision.models, name)().eval()
x = torch.rand(1, 3, size, size)
times = []
with torch.no_grad():
    for _ in range(warmup):
        model(x)
    for _ in range(repeat):
        t = time.perf_counter()
        model(x)
        times.append((time.perf_counter() - t) * 1000)
print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "timesMs": times}))
