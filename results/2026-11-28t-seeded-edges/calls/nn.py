"""Layer constructors with float, bool or out-of-range arguments beside PyTorch's: prints where one refuses
and the other takes them.

    python results/2026-11-28t-seeded-edges/calls/nn.py
"""
import warnings, numpy as np, minitx, torch
warnings.simplefilter("ignore")
from minitx import nn as mn
tn = torch.nn
cases = [
 ("Linear", (3.0, 4)), ("Linear", (True, 4)), ("Linear", (3, 4.5)), ("Conv1d", (3, 4, 2.5)), ("Conv2d", (3, 4, 2.0)), ("Conv2d", (3.0, 4, 2)),
 ("Conv2d", (3, 4, 2), {"stride": 1.5}), ("Conv2d", (3, 4, 2), {"padding": 1.0}), ("Conv2d", (3, 4, 2), {"dilation": True}),
 ("Embedding", (10.0, 3)), ("Embedding", (10, 3.0)), ("LayerNorm", (4.0,)), ("LayerNorm", (4,), {"eps": -1.0}),
 ("Dropout", (1.5,)), ("Dropout", (-0.1,)), ("Dropout", (True,)), ("MaxPool2d", (2.5,)), ("AvgPool2d", (2.0,)),
 ("BatchNorm1d", (4.0,)), ("GroupNorm", (2.0, 4)), ("LSTM", (3.0, 4)), ("GRU", (3, 4), {"num_layers": 1.5}),
 ("MultiheadAttention", (8.0, 2)), ("MultiheadAttention", (8, 2.0)), ("TransformerEncoderLayer", (8, 2), {"dim_feedforward": 16.0}),
 ("Flatten", (1.5,)), ("Unflatten", (1, (2.0, 2))), ("PixelShuffle", (2.0,)), ("Upsample", (), {"scale_factor": -1.0}),
 ("Softmax", (1.5,)), ("LogSoftmax", (True,)), ("PReLU", (2.5,)), ("RNN", (3, 4), {"nonlinearity": "sigmoid"}),
 ("Bilinear", (2.0, 3, 4)), ("EmbeddingBag", (10.0, 3)), ("ConvTranspose2d", (3, 4, 2), {"output_padding": 0.5}),
 ("AdaptiveAvgPool2d", (2.5,)), ("ZeroPad2d", (1.5,)), ("ReplicationPad1d", (1.0,)), ("ConstantPad1d", (1.5, 0.0)),
 ("CrossEntropyLoss", (), {"label_smoothing": 1.5}), ("CrossEntropyLoss", (), {"ignore_index": 1.5}), ("TripletMarginLoss", (), {"p": -1.0}),
 ("Hardtanh", (2.0, 1.0)), ("Threshold", (0.5, 1.0)), ("RReLU", (0.5, 0.1)), ("CELU", (0.0,)), ("Softplus", (0.0,)),
 ("ELU", (), {"alpha": -1.0}), ("LocalResponseNorm", (2.5,)), ("Fold", ((4, 4), 2.5)), ("Unfold", (2.5,)),
 ("ChannelShuffle", (2.5,)), ("GLU", (1.5,)), ("CosineSimilarity", (1.5,)), ("PairwiseDistance", (), {"p": -2.0}),
]
flag = []
for case in cases:
    name, args = case[0], case[1]; kwargs = case[2] if len(case) > 2 else {}
    if not hasattr(mn, name): print("missing", name); continue
    try: getattr(mn, name)(*args, **kwargs); ok = True
    except Exception as e: ok = False; err = f"{type(e).__name__}: {str(e)[:80]}"
    try: getattr(tn, name)(*args, **kwargs); tok = True
    except Exception as e: tok = False; terr = f"{type(e).__name__}: {str(e)[:80]}"
    if ok and not tok: flag.append((name, args, kwargs, "torch refuses:", terr))
    if not ok and tok: flag.append((name, args, kwargs, "minitx refuses:", err))
for f in flag: print(f)
print(len(flag))
