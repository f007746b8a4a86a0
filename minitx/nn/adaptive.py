"""``AdaptiveLogSoftmaxWithLoss``: PyTorch's adaptive softmax (Grave et al., 2016), a log-softmax over
many classes that spends less on the rare ones.

The classes are split at ``cutoffs`` = [c_1, ..., c_k] (and n_classes): the head predicts the
shortlist 0 .. c_1 - 1 and one entry per cluster [c_i, c_(i+1)); cluster i's tail, a projection to
in_features // div_value^(i+1) features and then to its classes, predicts a class within it:

    log p(y) = head_logprob[y]                                         (y in the shortlist)
    log p(y) = head_logprob[shortlist + i] + tail_i_logprob[y - c_i]     (y in cluster i)

Composed of Linear, log_softmax, gather, index_add and concatenate (their gradients are its)."""
from __future__ import annotations

import numbers
from collections import namedtuple

import numpy as np

import minitx.functional as F
from minitx import backend
from minitx.autograd.grad_mode import no_grad
from minitx.autograd.tensor import Tensor
from minitx.nn.layers import Linear, ModuleList, Sequential
from minitx.nn.module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])  # (PyTorch's name)


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input [N, in_features] (or [in_features]), target [N] (or a 0-d one)) returns
    (output, loss), a named tuple as PyTorch's: output[n] = log p(target[n]) (see the module's
    docstring), loss = mean(-output). ``log_prob(input)`` gives every class's log-probability
    [N, n_classes]; ``predict(input)`` the most probable class. head_bias: a bias in the head
    (the tails have none); the layers are drawn as PyTorch's, head first, then each tail's pair."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError(f"{name}: cutoffs should be a sequence of length larger than 0")
        if (any(isinstance(c, bool) or not isinstance(c, numbers.Real) or int(c) != c for c in cutoffs)
                or cutoffs != sorted(cutoffs) or len(set(cutoffs)) != len(cutoffs) or min(cutoffs) <= 0
                or max(cutoffs) > n_classes - 1):
            raise ValueError(f"{name}: cutoffs should be a sequence of unique, positive integers sorted in an "
                             f"increasing order, where each value is between 1 and n_classes-1 = {n_classes - 1}; "
                             f"got {cutoffs}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                        Linear(hidden, self.cutoffs[i + 1] - self.cutoffs[i], bias=False,
                                               device=device, dtype=dtype)))

    def reset_parameters(self):
        """The head and each tail's two projections drawn again, in the constructor's order."""
        self.head.reset_parameters()
        for to_hidden, to_classes in self.tail:
            to_hidden.reset_parameters()
            to_classes.reset_parameters()

    def forward(self, input, target):
        name = type(self).__name__
        if not isinstance(input, Tensor) or not isinstance(target, Tensor):
            raise TypeError(f"{name}: input and target must be Tensors, got {type(input).__name__} and "
                            f"{type(target).__name__}")
        if target.ndim > 1 or input.ndim != target.ndim + 1:
            raise ValueError(f"{name}: expected input [N, in_features] and target [N] (or input [in_features] and "
                             f"a 0-d target), got shapes {input.shape} and {target.shape}")
        if target.ndim == 1 and input.shape[0] != target.shape[0]:
            raise ValueError(f"{name}: input and target should have the same size in the batch dimension, got "
                             f"{input.shape[0]} and {target.shape[0]}")
        if target.dtype.kind not in "iu":
            raise TypeError(f"{name}: target must hold class indices (integers), got {target.dtype.name}")
        batched = target.ndim == 1
        x = input if batched else input.unsqueeze(0)
        classes = backend.to_numpy(target.data).reshape(-1).astype(np.int64)
        if classes.size and (classes.min() < 0 or classes.max() >= self.n_classes):
            raise ValueError(f"{name}: target values should be in [0, {self.n_classes - 1}], but values in range "
                             f"[{classes.min()}, {classes.max()}] were found")
        # the head's entry for each row: its class in the shortlist, else its cluster's
        cluster = np.searchsorted(self.cutoffs, classes, side="right")  # (0: the shortlist, i + 1: cluster i)
        head_entry = np.where(cluster == 0, classes, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(x), axis=1)
        output = F.gather(head_logprob, 1, Tensor(head_entry[:, None])).squeeze(1)
        for i in range(self.n_clusters):
            rows = np.flatnonzero(cluster == i + 1)
            if rows.size:  # (the tail of a cluster no target falls in is not run, as PyTorch's)
                tail_logprob = F.log_softmax(self.tail[i](x[Tensor(rows)]), axis=1)
                within = Tensor((classes[rows] - self.cutoffs[i])[:, None])
                output = F.index_add(output, 0, Tensor(rows), F.gather(tail_logprob, 1, within).squeeze(1))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        """[N, n_classes]: the shortlist's head log-probabilities, then each cluster's tail ones plus
        its head entry."""
        head_logprob = F.log_softmax(head_output, axis=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, tail in enumerate(self.tail):
            entry = self.shortlist_size + i
            parts.append(F.log_softmax(tail(input), axis=1) + head_logprob[:, entry:entry + 1])
        return F.concatenate(parts, axis=1)

    def log_prob(self, input):
        """Every class's log-probability, [N, n_classes], for input [N, in_features]."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row of input [N, in_features] (int64): the head's argmax
        where it is a shortlist class, else log_prob's argmax (the tails run on those rows alone)."""
        with no_grad():
            head_output = self.head(input)
            best = backend.to_numpy(F.argmax(head_output, axis=1).data).copy()
            rare = np.flatnonzero(best >= self.shortlist_size)
            if rare.size:
                rows = Tensor(rare)
                best[rare] = backend.to_numpy(F.argmax(self._full_log_prob(input[rows], head_output[rows]), axis=1).data)
        return Tensor(backend.to_device(best, input.device))

    def extra_repr(self):
        return ""
