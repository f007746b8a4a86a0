"""Encoder-only Transformers on Multi30k: masked-LM pretraining, fine-tuning with few labels
(parallel-sentence detection), and what the embeddings learned (neighbours, analogies).

    python -m minitx.encoder pretrain --recipe cpu --output-dir runs/encoder-mlm
    python -m minitx.encoder finetune --run runs/encoder-mlm --labels 200 1000 5000
    python -m minitx.encoder neighbours --run runs/encoder-mlm --words Hund dog Frau
"""
