"""minitx.optim: optimizers, gradient clipping and learning-rate schedules.

    from minitx import optim
    opt = optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    sched = optim.WarmupInverseSqrt(opt, peak_lr=3e-4, warmup_steps=4000)
    ...
    loss.backward()
    optim.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step(); opt.zero_grad(); sched.step()

PyTorch's schedulers, each group's own lr scaled, live in minitx.optim.lr_scheduler (StepLR,
OneCycleLR, ...); the schedules above set one rate for every group (see minitx.optim.schedules).

float16 training scales its loss (GradScaler: scaler.scale(loss).backward(), scaler.step(opt),
scaler.update()); see minitx.optim.grad_scaler.

Every optimizer's step takes PyTorch's closure: opt.step(closure), where the closure zeroes the
gradients, computes the loss, calls backward and returns the loss, which step returns. LBFGS needs
one: it evaluates the loss several times per step (see minitx.optim.lbfgs).
"""
from minitx.optim.adafactor import Adafactor
from minitx.optim.adagrad import Adadelta, Adagrad
from minitx.optim.adam import Adam, AdamW
from minitx.optim.adam_variants import Adamax, NAdam, RAdam
from minitx.optim.clip import clip_grad_norm_, clip_grad_value_
from minitx.optim.grad_scaler import GradScaler
from minitx.optim.lbfgs import LBFGS
from minitx.optim.optimizer import Optimizer
from minitx.optim.rmsprop import RMSprop
from minitx.optim.rprop import Rprop
from minitx.optim.schedules import (LRSchedule, NoamSchedule, ReduceLROnPlateau, WarmupCosine,
                                    WarmupInverseSqrt, noam_lr, warmup_cosine_lr,
                                    warmup_inverse_sqrt_lr)
from minitx.optim.sgd import ASGD, SGD
from minitx.optim import lr_scheduler

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
    "Rprop", "ASGD", "Adafactor", "LBFGS",
    "clip_grad_norm_", "clip_grad_value_", "GradScaler",
    "LRSchedule", "NoamSchedule", "WarmupInverseSqrt", "WarmupCosine", "ReduceLROnPlateau",
    "noam_lr", "warmup_inverse_sqrt_lr", "warmup_cosine_lr", "lr_scheduler",
]
