"""Exports models from PyTorch to ONNX for network/torch_test.ts, with their outputs.

usage: python3 network/_torch_export.py OUTDIR
Writes, for a tiny model (every operator the importer reads) and torchvision's
ResNet-18 (random weights, eval mode, batch 1, 224x224): NAME.onnx, NAME_in.bin and
NAME_out.bin (float32, little-endian: the input and PyTorch's output on it).
"""
import sys

import torch
import torchvision
from torch import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.pw = nn.Conv2d(8, 12, 1, stride=1)
        self.grouped = nn.Conv2d(20, 20, 3, stride=2, padding=1, groups=4)
        self.avg = nn.AvgPool2d(2)
        self.fc = nn.Linear(20, 6)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.c1(x))))
        y = nn.functional.relu6(self.dw(x)) + x
        y = torch.cat([self.pw(y), y], 1)
        y = self.avg(self.grouped(y))
        y = nn.functional.adaptive_avg_pool2d(y, 1)
        return self.fc(torch.flatten(y, 1))


def export(model, name, shape, out):
    model.eval()
    # Batch-norm statistics other than the identity, so that folding is exercised.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    x = torch.rand(*shape) * 2 - 1
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, x, f"{out}/{name}.onnx", opset_version=13)
    x.numpy().astype("<f4").tofile(f"{out}/{name}_in.bin")
    y.numpy().astype("<f4").tofile(f"{out}/{name}_out.bin")


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(2)
    export(Tiny(), "tiny", (1, 3, 18, 18), sys.argv[1])
    export(torchvision.models.resnet18(), "resnet18", (1, 3, 224, 224), sys.argv[1])
