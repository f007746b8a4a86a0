"""Loss curves of a run: ``python -m minitx.translate plot --run runs/X`` (needs ``minitx[plot]``).

One PNG with three panels against optimizer steps: the training and validation loss of each
epoch record in history.json (the training loss is that epoch's mean, drawn at its last
step), the validation BLEU where the run measured it (bleu_every), and the learning rate the
run's schedule gives at every step (recomputed from config.json by the same schedule
classes, so it is exact without being stored; the 'plateau' schedule is replayed over the
history's validation losses, as the run stepped it).
"""
from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import minitx
from minitx.serialization import read_json
from minitx.translate.recipes import DEFAULTS


def learning_rates(config: dict, steps: int, history=()) -> list:
    """The learning rate of steps 1..steps under the configuration's optimizer and schedule
    (``history``, the epoch records, for a schedule stepped with validation losses)."""
    from minitx.translate.training import build_optimizer

    # the optimizer needs parameters and the noam schedule d_model: a stand-in model gives both
    stand_in = SimpleNamespace(d_model=config["d_model"], parameters=lambda: [minitx.zeros(1, requires_grad=True)])
    opt, schedule = build_optimizer(config, stand_in)
    if isinstance(schedule, minitx.optim.ReduceLROnPlateau):  # as the trainer steps it: at complete epochs' ends
        rates = []
        for record in history:
            rates += [opt.param_groups[0]["lr"]] * (record["step"] - len(rates))
            if record["complete"] and math.isfinite(record["val_loss"]):
                schedule.step(record["val_loss"])
        return (rates + [opt.param_groups[0]["lr"]] * steps)[:steps]
    return [schedule.lr_at(step) if schedule else config["lr"] for step in range(1, steps + 1)]


def plot_history(run_dir, output=None) -> Path:
    """Draw the run's curves into ``output`` (default <run_dir>/history.png); returns its path."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError('plot needs matplotlib: pip install "minitx[plot]"') from None
    run_dir = Path(run_dir)
    history_path = run_dir / "history.json"
    if not history_path.is_file():
        raise FileNotFoundError(f"{run_dir} has no history.json: it is not a minitx translation run, or no epoch "
                                "has ended yet")
    history = read_json(history_path, list)
    config = {**DEFAULTS, **read_json(run_dir / "config.json")}
    if not history:
        raise ValueError(f"{history_path} holds no epoch record yet: nothing to plot")
    for i, record in enumerate(history):  # what the curves read, each a number
        if not (isinstance(record, dict) and all(isinstance(record.get(key), (int, float))
                                                 and not isinstance(record.get(key), bool)
                                                 for key in ("step", "train_loss", "val_loss"))):
            raise ValueError(f"{history_path}: record {i} is {record!r:.100}; expected an epoch record with a "
                             "step, a train_loss and a val_loss")
    steps = [record["step"] for record in history]

    fig, (loss_ax, bleu_ax, lr_ax) = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    smoothed = ", label-smoothed" if config["label_smoothing"] else ""
    loss_ax.plot(steps, [r["train_loss"] for r in history], "o-", label=f"training (epoch mean{smoothed})")
    loss_ax.plot(steps, [r["val_loss"] for r in history], "s-", label="validation")
    loss_ax.set_ylabel("cross-entropy per token")
    loss_ax.legend()
    measured = [r for r in history if "val_bleu" in r]
    if measured:
        bleu_ax.plot([r["step"] for r in measured], [r["val_bleu"] for r in measured], "o-")
    else:
        bleu_ax.text(0.5, 0.5, "no validation BLEU (bleu_every 0)", ha="center", va="center",
                     transform=bleu_ax.transAxes)
    bleu_ax.set_ylabel("validation BLEU")
    lr_ax.plot(range(1, steps[-1] + 1), learning_rates(config, steps[-1], history))
    lr_ax.set_ylabel(f"learning rate ({config['schedule']})")
    lr_ax.set_xlabel("optimizer step")
    for ax in (loss_ax, bleu_ax, lr_ax):
        ax.grid(alpha=0.3)
    fig.suptitle(f"{run_dir.name}: {config['src_lang']}-{config['tgt_lang']}, {steps[-1]} steps")
    fig.tight_layout()
    output = Path(output) if output else run_dir / "history.png"
    output.parent.mkdir(parents=True, exist_ok=True)  # (as finetune --output makes its directory)
    fig.savefig(output, dpi=110)
    plt.close(fig)
    return output
