"""Calls that take a shape, a length or an axis, given 2.5, True, None, -1 and "a": prints each call whose
error does not name the function (marked !!; named: the message holds its first four letters) or that passes (OK, with the result's shape), then the counts.

    PYTHONPATH=<checkout> python shapes.py
"""
import minitx, numpy as np
x = minitx.ones(2, 3)
bad = [2.5, True, None, -1, "a"]
calls = {
 "zeros": lambda b: minitx.zeros(2, b), "ones": lambda b: minitx.ones((b, 2)), "empty": lambda b: minitx.empty(b),
 "full": lambda b: minitx.full((2, b), 1.0), "rand": lambda b: minitx.rand(2, b), "randn": lambda b: minitx.randn(b),
 "randint": lambda b: minitx.randint(0, 5, (2, b)), "randperm": lambda b: minitx.randperm(b),
 "eye_n": lambda b: minitx.eye(b), "eye_m": lambda b: minitx.eye(2, b),
 "normal": lambda b: minitx.normal(0.0, 1.0, size=(b,)),
 "hann": lambda b: minitx.hann_window(b), "tril_indices": lambda b: minitx.tril_indices(b, 3),
 "reshape": lambda b: x.reshape(3, b), "view": lambda b: x.view(b, 3), "expand": lambda b: minitx.ones(1,3).expand(b, 3),
 "repeat": lambda b: x.repeat(b, 1), "new_zeros": lambda b: x.new_zeros(b), "new_full": lambda b: x.new_full((b,), 1.0),
 "new_empty": lambda b: x.new_empty((2, b)), "new_ones": lambda b: x.new_ones(b),
 "broadcast_to": lambda b: minitx.broadcast_to(x, (b, 2, 3)), "unflatten": lambda b: x.unflatten(1, (b, 3)),
 "flatten": lambda b: x.flatten(b), "unsqueeze": lambda b: x.unsqueeze(b), "movedim": lambda b: minitx.movedim(x, b, 0),
 "narrow": lambda b: x.narrow(0, b, 1), "select": lambda b: x.select(0, b), "chunk": lambda b: x.chunk(b),
 "tensor_split": lambda b: minitx.tensor_split(x, b), "unbind": lambda b: x.unbind(b), "flip": lambda b: x.flip(b),
 "rot90": lambda b: minitx.rot90(x, b), "repeat_interleave": lambda b: minitx.repeat_interleave(x, b),
 "cumsum": lambda b: x.cumsum(b), "softmax": lambda b: minitx.functional.softmax(x, b),
 "argmax": lambda b: x.argmax(b), "kthvalue": lambda b: minitx.kthvalue(x, b), "sort": lambda b: x.sort(b),
 "gather": lambda b: minitx.gather(x, b, minitx.zeros(2,3,dtype="int64")), "cat": lambda b: minitx.cat([x, x], b),
 "stack": lambda b: minitx.stack([x, x], b), "multinomial": lambda b: minitx.multinomial(minitx.ones(3), b),
 "one_hot": lambda b: minitx.functional.one_hot(minitx.tensor([0,1]), b),
 "nn.Linear": lambda b: minitx.nn.Linear(b, 3), "nn.Embedding": lambda b: minitx.nn.Embedding(b, 3),
 "nn.LayerNorm": lambda b: minitx.nn.LayerNorm(b), "nn.Conv1d": lambda b: minitx.nn.Conv1d(2, b, 3),
 "nn.MultiheadAttention": lambda b: minitx.nn.MultiheadAttention(8, b), "nn.Dropout": lambda b: minitx.nn.Dropout(b),
 "nn.Flatten": lambda b: minitx.nn.Flatten(b)(x), "nn.Softmax": lambda b: minitx.nn.Softmax(b)(x),
 "nn.Unflatten": lambda b: minitx.nn.Unflatten(1, (b, 3))(x),
 "nn.GroupNorm": lambda b: minitx.nn.GroupNorm(b, 4), "nn.BatchNorm1d": lambda b: minitx.nn.BatchNorm1d(b),
 "nn.RNN": lambda b: minitx.nn.RNN(3, b), "nn.LSTM_layers": lambda b: minitx.nn.LSTM(3, 4, b),
 "nn.Bilinear": lambda b: minitx.nn.Bilinear(2, 2, b), "nn.AdaptiveAvgPool1d": lambda b: minitx.nn.AdaptiveAvgPool1d(b)(minitx.ones(1,2,4)),
 "nn.Upsample": lambda b: minitx.nn.Upsample(size=b)(minitx.ones(1,2,4)),
 "nn.PixelShuffle": lambda b: minitx.nn.PixelShuffle(b)(minitx.ones(1,4,2,2)),
 "nn.TransformerEncoderLayer": lambda b: minitx.nn.TransformerEncoderLayer(8, b),
}
counts = {"named": 0, "unnamed": 0, "passed": 0}
for name, f in calls.items():
    for b in bad:
        try:
            r = f(b)
            out = f"OK {getattr(r, 'shape', type(r).__name__)}"
        except Exception as e:
            msg = str(e).split("\n")[0]
            key = name.split(".")[-1].split("_")[0].lower()
            named = key[:4] in msg.lower()
            out = f"{'' if named else '!! '}{type(e).__name__}: {msg[:110]}"
        verdict = "passed" if out.startswith("OK") else "unnamed" if out.startswith("!!") else "named"
        counts[verdict] += 1
        if verdict == "unnamed" or (verdict == "passed" and b != -1):  # (-1: an axis from the end, or inferred)
            print(f"{name:24s} {b!r:6s} {out}")
print(f"{len(calls)} calls x {len(bad)} values:", ", ".join(f"{k} {v}" for k, v in counts.items()))
