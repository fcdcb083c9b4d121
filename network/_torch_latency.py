"""PyTorch CPU latency of the built-in networks (torchvision, random weights, eval mode,
batch 1, 224x224, 2 threads): 2 warm-up runs, then the median of 5.

usage: /usr/bin/python3 network/_torch_latency.py   (Debian python3-torch, python3-torchvision)
"""
import time, torch, torchvision
torch.set_num_threads(2); torch.manual_seed(0)
for name in ["resnet18", "mobilenet_v2", "squeezenet1_1"]:
    m = getattr(torchvision.models, name)().eval(); x = torch.rand(1, 3, 224, 224)
    with torch.no_grad():
        for _ in range(2): m(x)
        ts = []
        for _ in range(5):
            t = time.perf_counter(); m(x); ts.append((time.perf_counter() - t) * 1000)
    ts.sort(); print(name, "median ms %.1f" % ts[2], ["%.1f" % t for t in ts])
