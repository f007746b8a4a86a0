"""A reusable trainer: the loop, checkpoints, exact resume, averaging, progress, run directories.

Any model can use it. The application supplies

    model            a minitx Module, built after ``minitx.manual_seed(seed)``
    optimizer        and optionally a learning-rate ``schedule`` (minitx.optim), stepped after every
                     optimizer step; a ReduceLROnPlateau is stepped with each complete epoch's
                     validation loss instead
    batches          ``batches(seed, epoch)``: the training batches of one epoch, a sized iterable
                     (a list, or an object with __len__ and __iter__ making them as they are used,
                     and slicing, so a resumed epoch skips the done ones unmade); the same
                     (seed, epoch) must give the same batches, so that a resumed run continues
                     exactly where it stopped. It is also called once per epoch to come to count
                     them for the progress bar: make the tensors lazily if they are costly
    loss_fn          ``loss_fn(model, batch)`` -> (loss tensor to minimize, its weight: the number
                     of tokens or examples it averages over, for the epoch's mean training loss)
    validation_loss  ``validation_loss(model)`` -> a number, measured at each epoch's end
                     (``mean_loss`` computes one over fixed batches in eval mode)
    evaluate         optional: ``evaluate(model, epoch)`` -> {metric: value} for that epoch's record

and gets, in ``run_dir``:

    last.npz         model, optimizer, schedule, a float16 run's loss scaler (Trainer(scaler=)), random
                     state, position in the data and history:
                     written every ``save_every`` steps and, as the last write of each epoch's
                     end, once more; ``Trainer.resume()`` reloads it, and the run goes on bit for
                     bit as if never stopped, whenever it was killed
    best.npz         the model with the lowest validation loss so far
    epoch-<n>.npz    the last ``average_last`` epochs' models, averaged at the end into
                     averaged.npz (``choose_final`` keeps whichever of the two validates better);
                     every epoch's with ``keep_epochs`` (to score a run as it learned)
    history.json     one record per epoch: epoch, step, complete, train_loss, val_loss, val_ppl,
                     seconds, and the evaluate hook's metrics

plus one progress bar to the run's real end (``plan``), stopping at ``epochs``, ``max_steps``
or ``time_limit`` minutes, or early after ``patience`` epochs without a better validation loss
(``patience_reason``), and Ctrl-C that saves last.npz before it stops (TrainingInterrupted).
Files are written whole or not at all (a temporary file, then a rename), in order, on a thread
of their own while training goes on (``write_in_background``). ``RunLifecycle``
(lifecycle.py) is a run's life in order, for any application: resume or overwrite, the
configuration validated once, the device, nothing written before the inputs are known good, then
the Trainer resumed and fitted; both minitx applications use it. The run directory's rules are in
``rundir``: ``check_new_run`` refuses an earlier run unless ``overwrite``, and
``start_new_run`` deletes it only once everything that can fail has been prepared;
``resume_config`` says which saved options may change on resume.

Example: a masked-language-model pretraining of an encoder-only model, in outline (``my_model``
and ``make_masked_batch`` stand for your own; minitx/encoder/pretraining.py is the complete
version, with minitx.nn.MaskedLanguageModel and minitx.encoder.data's batches)::

    import minitx, minitx.functional as F
    from minitx import optim
    from minitx.train import Trainer, mean_loss

    minitx.manual_seed(seed)
    model = my_model()                                    # any Module
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    schedule = optim.WarmupInverseSqrt(opt, peak_lr=1e-3, warmup_steps=500)

    def batches(seed, epoch):                             # deterministic in (seed, epoch)
        order = numpy.random.default_rng([seed, epoch]).permutation(len(sentences))
        return [make_masked_batch(sentences, order[i:i + 64], seed, epoch) for i in range(0, len(order), 64)]

    def loss_fn(model, batch, reduction="mean"):          # batch: tokens, labels (-100: not masked)
        logits = model(batch.tokens)
        loss = F.cross_entropy(logits, batch.labels, ignore_index=-100, reduction=reduction)
        return loss, batch.n_masked

    val = make_masked_batch(val_sentences, range(len(val_sentences)), seed, 0)
    trainer = Trainer("runs/mlm", model, opt, loss_fn, batches, schedule=schedule, seed=seed,
                      validation_loss=lambda m: mean_loss(m, [val], lambda m, b: loss_fn(m, b, "sum")),
                      epochs=10, save_every=200, average_last=3, clip_norm=1.0)
    if resume:
        trainer.resume()                                  # continue from last.npz
    trainer.fit()                                         # the loop; last/best/epoch checkpoints
    name, losses = trainer.choose_final()                 # best or averaged, loaded into model

tests/train/test_trainer.py runs the same calls on a small MLP, with kills at random moments.
"""
from minitx.serialization import write_json
from minitx.train.checkpoints import average_checkpoints, load_checkpoint, save_checkpoint
from minitx.train.lifecycle import RunLifecycle
from minitx.train.loop import (MicroBatches, Trainer, TrainingInterrupted, mean_loss, patience_reason,
                               stop_reason, train_step)
from minitx.train.rundir import (APPLICATION_FILES, APPLICATION_PATTERNS, DATA_KEYS, TRAINER_FILES, TRAINER_PATTERNS,
                                 check_data, check_new_run, data_digest, json_safe, log, log_data_read,
                                 read_saved_config, resolve_data_dir, resume_config, run_files, runs_data_dir,
                                 start_new_run)

__all__ = ["RunLifecycle", "Trainer", "TrainingInterrupted", "train_step", "MicroBatches", "stop_reason", "patience_reason", "mean_loss", "save_checkpoint", "load_checkpoint",
           "average_checkpoints", "write_json", "check_new_run", "start_new_run", "read_saved_config", "resume_config",
           "run_files", "json_safe", "log", "log_data_read", "TRAINER_FILES", "TRAINER_PATTERNS", "check_data",
           "data_digest", "DATA_KEYS", "APPLICATION_FILES", "APPLICATION_PATTERNS", "resolve_data_dir", "runs_data_dir"]
