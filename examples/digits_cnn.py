"""Train a small convolutional network on scikit-learn's 8x8 handwritten digits, on a CPU.

    pip install "minitx[digits]"          # scikit-learn, for its bundled digits (no download)
    python examples/digits_cnn.py         # 15 epochs
    python examples/digits_cnn.py --epochs 3

The 1,797 images (8x8 pixels, 16 grey levels, ten classes) are split 80/20, stratified. The
network: conv 3x3 (1 -> 16 channels, padding 1), ReLU, max-pool 2x2 -> 16x4x4; conv 3x3
(16 -> 32, padding 1), ReLU, max-pool 2x2 -> 32x2x2; a linear layer to 10 logits. Adam with a
cosine decay, cross-entropy. It prints the loss and test accuracy after each epoch.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import minitx
import minitx.functional as F
import minitx.nn as nn
from minitx import optim


def load_digits(seed=0, test_fraction=0.2):
    """(x_train, y_train, x_test, y_test): images [N, 1, 8, 8] scaled to [0, 1], int labels.
    Exits with a message when scikit-learn is missing."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        sys.exit('digits_cnn: this example needs scikit-learn for its bundled digits: pip install "minitx[digits]"')
    data = sklearn_digits()
    images = (data.images / 16.0).astype(np.float32)[:, None]
    labels = data.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    test = np.zeros(len(labels), dtype=bool)
    for digit in range(10):  # the same fraction of every digit in the test set
        members = np.flatnonzero(labels == digit)
        test[rng.choice(members, int(round(test_fraction * len(members))), replace=False)] = True
    return images[~test], labels[~test], images[test], labels[test]


class DigitsCNN(nn.Module):
    """conv-relu-pool twice, then a linear layer: [N, 1, 8, 8] -> [N, 10] logits (6,090 parameters)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.out = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))   # [N, 16, 4, 4]
        x = self.pool(F.relu(self.conv2(x)))   # [N, 32, 2, 2]
        return self.out(x.reshape(x.shape[0], -1))


def accuracy(model, images, labels, batch_size=500):
    model.eval()
    correct = 0
    with minitx.no_grad():
        for start in range(0, len(labels), batch_size):
            logits = model(minitx.tensor(images[start:start + batch_size]))
            correct += int((logits.argmax(axis=-1).numpy() == labels[start:start + batch_size]).sum())
    model.train()
    return correct / len(labels)


def train(model, x_train, y_train, x_test, y_test, epochs=15, batch_size=32, lr=3e-3, seed=0, log=print):
    """Adam with cosine decay over all steps; returns the test accuracy after each epoch."""
    steps_per_epoch = -(-len(y_train) // batch_size)
    opt = optim.Adam(model.parameters(), lr=lr)
    schedule = optim.WarmupCosine(opt, peak_lr=lr, warmup_steps=steps_per_epoch // 2,
                                  total_steps=epochs * steps_per_epoch, min_lr=lr / 50)
    rng = np.random.default_rng(seed)
    history = []
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(y_train))
        losses = []
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            loss = F.cross_entropy(model(minitx.tensor(x_train[batch])), y_train[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            losses.append(loss.item())
        history.append(accuracy(model, x_test, y_test))
        log(f"epoch {epoch:2d}  loss {np.mean(losses):.4f}  test accuracy {history[-1]:.4f}")
    return history


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    args = parser.parse_args()

    x_train, y_train, x_test, y_test = load_digits()
    minitx.manual_seed(0)
    model = DigitsCNN()
    print(f"{len(y_train)} training and {len(y_test)} test images; a {model.num_parameters():,}-parameter CNN")
    start = time.perf_counter()
    history = train(model, x_train, y_train, x_test, y_test, epochs=args.epochs)
    print(f"trained {args.epochs} epochs in {time.perf_counter() - start:.1f} s; test accuracy {history[-1]:.4f}")


if __name__ == "__main__":
    main()
