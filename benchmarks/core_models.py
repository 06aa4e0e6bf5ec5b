"""The models the core benchmarks trace: a 12-layer TransformerEncoder, a ResNet-18-like convnet, MLPs, op
chains (one that diverges on every op between batch sizes) and the small cases of the fixed costs."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


def transformer_encoder() -> nn.Module:
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).eval()


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        if stride != 1 or cin != cout:
            self.shortcut: nn.Module = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class ResNet18Like(nn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        blocks: list[nn.Module] = []
        cin = 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def mlp(layers: int, width: int, changed_layer: int | None = None) -> nn.Sequential:
    """``layers`` Linear(width, width), each followed by a ReLU except the last (with ``changed_layer``: that
    layer's ReLU is a Tanh instead, and every layer has an activation)."""
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(width, width))
        if changed_layer is not None:
            mods.append(nn.Tanh() if i == changed_layer else nn.ReLU())
        elif i < layers - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


def chain(op: Callable[[torch.Tensor], torch.Tensor], n: int) -> Callable[[torch.Tensor], torch.Tensor]:
    def chain_fn(x: torch.Tensor) -> torch.Tensor:
        for _ in range(n):
            x = op(x)
        return x

    return chain_fn


def flipping_chain(n: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """``n`` sins for a batch of 2, ``n`` cosines otherwise: traced at 2 and checked at 3, every op diverges."""

    def chain_fn(x: torch.Tensor) -> torch.Tensor:
        op = torch.sin if x.shape[0] == 2 else torch.cos
        for _ in range(n):
            x = op(x)
        return x

    return chain_fn


def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2
