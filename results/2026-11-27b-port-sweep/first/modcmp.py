# Same weights, same input: forward and input-gradient of common layers, torch vs minitx
import numpy as np, torch, torch.nn as tnn, minitx, minitx.nn as mnn
rng = np.random.default_rng(0)
cases = [
    ("LayerNorm([4,5])", lambda nn: nn.LayerNorm([4, 5]), (2, 3, 4, 5)),
    ("LayerNorm(5, elementwise_affine=False)", lambda nn: nn.LayerNorm(5, elementwise_affine=False), (2, 5)),
    ("GroupNorm(2, 4)", lambda nn: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    ("InstanceNorm2d(4)", lambda nn: nn.InstanceNorm2d(4), (2, 4, 3, 3)),
    ("BatchNorm1d(4) 3-D", lambda nn: nn.BatchNorm1d(4), (3, 4, 5)),
    ("Conv2d groups=2 stride 2 dil 2", lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2), (2, 4, 9, 9)),
    ("Conv1d", lambda nn: nn.Conv1d(3, 5, 3, padding=1), (2, 3, 7)),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), (2, 4, 5, 5)),
    ("MaxPool2d(3,2,1)", lambda nn: nn.MaxPool2d(3, 2, 1), (2, 3, 8, 8)),
    ("AvgPool2d(2) count_include_pad", lambda nn: nn.AvgPool2d(3, 2, 1), (2, 3, 8, 8)),
    ("AdaptiveAvgPool2d((3,2))", lambda nn: nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 7, 5)),
    ("LSTM bidir 2-layer", lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True), (2, 5, 3)),
    ("GRU seq-first", lambda nn: nn.GRU(3, 4), (5, 2, 3)),
    ("RNN tanh", lambda nn: nn.RNN(3, 4, batch_first=True), (2, 5, 3)),
    ("GELU", lambda nn: nn.GELU(), (3, 4)),
    ("GELU tanh", lambda nn: nn.GELU(approximate="tanh"), (3, 4)),
    ("SiLU", lambda nn: nn.SiLU(), (3, 4)),
    ("Softplus", lambda nn: nn.Softplus(), (3, 4)),
    ("PReLU", lambda nn: nn.PReLU(), (3, 4)),
    ("Upsample bilinear", lambda nn: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False), (1, 2, 3, 3)),
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), (1, 8, 2, 2)),
    ("Dropout eval", lambda nn: nn.Dropout(0.5).eval(), (3, 4)),
]
for name, make, shape in cases:
    try:
        torch.manual_seed(0)
        tm = make(tnn); mm = make(mnn)
        sd = tm.state_dict()
        if sd: mm.load_state_dict(sd)
        x = rng.standard_normal(shape).astype(np.float32)
        tx = torch.tensor(x, requires_grad=True); mx = minitx.tensor(x, requires_grad=True)
        to, mo = tm(tx), mm(mx)
        if isinstance(to, tuple): to, mo = to[0], mo[0]
        w = rng.standard_normal(tuple(to.shape)).astype(np.float32)
        (to * torch.tensor(w)).sum().backward(); (mo * minitx.tensor(w)).sum().backward()
        d = np.abs(to.detach().numpy() - mo.numpy()).max() if tuple(to.shape) == tuple(mo.shape) else f"shape {tuple(to.shape)} vs {mo.shape}"
        dg = np.abs(tx.grad.numpy() - mx.grad.numpy()).max()
        extra = ""
        if getattr(tm, "running_var", None) is not None:
            extra = f" running_var diff {np.abs(tm.running_var.numpy() - mm.running_var.numpy()).max():.1e}"
        print(f"{'OK  ' if (not isinstance(d, str) and d < 1e-4 and dg < 1e-4) else 'DIFF'} {name:40s} out {d if isinstance(d, str) else f'{d:.1e}'} grad {dg:.1e}{extra}")
    except Exception as e:
        print(f"ERR  {name:40s} {type(e).__name__}: {e}"[:300])
