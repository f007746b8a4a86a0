# NOTE: the "torch:" line is produced by a naive text substitution; where minitx names differ (mopt., MF.topk, lr_scheduler) it is not meaningful -- see REPORT.md for PyTorch behaviour.
# Minimal repros of every finding in the report; each line: id, code, minitx's answer, PyTorch's answer.
import numpy as np, torch, torch.nn.functional as TF, torch.nn as tnn
import minitx, minitx.functional as MF, minitx.nn as mnn, minitx.optim as mopt

def both(fid, mcode, tcode=None):
    out = []
    for lib, code in (("minitx", mcode), ("torch", tcode or mcode.replace("minitx.", "torch.").replace("MF.", "TF.").replace("mnn.", "tnn."))):
        env = dict(minitx=minitx, MF=MF, mnn=mnn, mopt=mopt, torch=torch, TF=TF, tnn=tnn, np=np)
        try:
            *pre, last = code.split(";;")
            for p in pre: exec(p.strip(), env)
            r = eval(last.strip(), env)
            r = r.tolist() if hasattr(r, "tolist") and not isinstance(r, (tuple, list)) else r
            out.append(f"{lib}: {r!r}"[:160])
        except Exception as e:
            out.append(f"{lib}: {type(e).__name__}: {e}"[:220])
    print(f"[{fid}] {mcode}\n     " + "\n     ".join(out))

# (a) silently different
both("A1 pad", "tuple(MF.pad(minitx.ones(2, 3), (0, 2)).shape)")
both("A1 pad3d", "tuple(MF.pad(minitx.ones(4, 8, 10), (1, 1)).shape)")
both("A2 CE class axis", "x = np.random.default_rng(0).standard_normal((2, 3, 3)).astype('float32');; y = np.array([[0, 1, 2], [2, 1, 0]]);; round(MF.cross_entropy(minitx.tensor(x), minitx.tensor(y)).item(), 4)")
both("A3 max unpack", "v, i = minitx.tensor([[1.0, 3.0], [4.0, 2.0]]).max(1);; (v.tolist(), i.tolist())")
both("A3 max(1)[1]", "minitx.tensor([[1.0, 3.0], [4.0, 2.0]]).max(1)[1]")
both("A4 std()", "minitx.tensor([1.0, 2.0, 3.0, 4.0]).std()")
both("A4 var(0)", "minitx.tensor([[1.0, 2.0], [3.0, 5.0]]).var(0)")
both("A5 transpose 2-D", "minitx.arange(6).view(2, 3).transpose(0, 1).shape")
both("A5 k.transpose(-2,-1) 2-D", "minitx.arange(4.0).view(2, 2).transpose(-2, -1)")
both("A6 repeat", "minitx.arange(3).repeat(2)")
both("A6 repeat 2-D", "tuple(minitx.ones(1, 3).repeat(2, 1).shape)")
both("A7 full int", "minitx.full((2,), 7).dtype")
both("A7 full bool", "minitx.full((2,), True).dtype")
both("A8 cat int+float", "minitx.cat([minitx.tensor([1]), minitx.tensor([1.5])]).dtype")
both("A9 set_grad_enabled()", "minitx.set_grad_enabled(False);; r = (minitx.ones(1, requires_grad=True) * 2).requires_grad;; minitx.set_grad_enabled(True);; r")
both("A10 equal", "MF.equal(minitx.ones(2), minitx.ones(2))", "torch.equal(torch.ones(2), torch.ones(2))")
both("A11 group lr", "o = mopt.SGD([{'params': [mnn.Parameter(minitx.ones(1))], 'lr': 1e-4}, {'params': [mnn.Parameter(minitx.ones(1))]}], lr=1e-2);; s = mopt.WarmupCosine(o, peak_lr=1e-2, warmup_steps=0, total_steps=10);; [g['lr'] for g in o.param_groups]",
     "o = torch.optim.SGD([{'params': [tnn.Parameter(torch.ones(1))], 'lr': 1e-4}, {'params': [tnn.Parameter(torch.ones(1))]}], lr=1e-2);; s = torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10);; [g['lr'] for g in o.param_groups]")
both("A12 sd order", "list(mnn.Sequential(mnn.BatchNorm1d(2), mnn.Linear(2, 2)).state_dict())[:3]")
both("A13 sd copies", "m = mnn.Linear(1, 1);; sd = m.state_dict();; sd['bias'][...] = 5.0;; m.bias.tolist()", "m = tnn.Linear(1, 1);; sd = m.state_dict();; sd['bias'][...] = 5.0;; m.bias.tolist()")
# (b) missing API
for code in ["minitx.long", "minitx.float", "minitx.bool", "minitx.randint(0, 5, (2,))", "minitx.randperm(4)", "minitx.where(minitx.ones(2) > 0, 1.0, 0.0)",
             "minitx.tril(minitx.ones(2, 2))", "minitx.exp(minitx.ones(1))", "minitx.flatten(minitx.ones(2, 2, 2), 1).shape", "minitx.multinomial(minitx.tensor([0.0, 1.0]), 1)",
             "minitx.from_numpy(np.ones(2))", "minitx.clamp(minitx.ones(2), 0, 1)", "minitx.bmm(minitx.ones(1, 2, 2), minitx.ones(1, 2, 2)).shape",
             "MF.tril(minitx.ones(2, 2), diagonal=-1)", "minitx.ones(2, 3).t().shape", "minitx.arange(6).split(2)", "minitx.ones(2).add(1)",
             "minitx.zeros(2).uniform_(0, 1).shape", "mnn.Linear(2, 2).weight.data.normal_(0, 0.02)", "minitx.zeros(3).masked_fill_(minitx.tensor([True, False, True]), 1.0)",
             "minitx.zeros(3).scatter_(0, minitx.tensor([1]), 5.0)", "MF.topk(minitx.tensor([1.0, 3.0]), 1).indices", "mnn.init.kaiming_normal_(mnn.Linear(2, 2).weight).shape",
             "mnn.init.constant_(mnn.Linear(2, 2).bias, 0.1)", "mnn.init.uniform_(mnn.Linear(2, 2).weight, a=-0.1, b=0.1).shape", "mnn.utils.clip_grad_norm_",
             "mopt.lr_scheduler.StepLR", "mnn.Linear(2, 2).load_state_dict(mnn.Linear(2, 2).state_dict()).missing_keys",
             "mnn.Linear(2, 2).zero_grad(set_to_none=True)", "minitx.ones(2).to('cpu', non_blocking=True).shape", "mnn.MultiheadAttention(8, 2, batch_first=True)",
             "mnn.TransformerEncoderLayer(8, 2)", "MF.scaled_dot_product_attention(minitx.ones(1, 2, 4), minitx.ones(1, 2, 4), minitx.ones(1, 2, 4), is_causal=True).shape",
             "MF.cross_entropy(minitx.zeros(2, 3), minitx.tensor([0, 1]), weight=minitx.ones(3))", "MF.relu(minitx.ones(2), inplace=True)",
             "mnn.Linear(2, 2).state_dict()['weight'].clone()", "type(mopt.clip_grad_norm_(mnn.Linear(2, 2).parameters(), 1.0)).__name__",
             "minitx.ones(2, 3).type(minitx.float64)", "minitx.ones(2).mean(dtype=minitx.float64)", "minitx.save(mnn.Linear(2, 2), '/tmp/port_sweep2/m.pt')",
             "__import__('minitx.nn.functional')"]:
    both("B", code)
# (c) unclear errors
both("C1 transpose", "minitx.ones(2, 3, 4).transpose(1, 2).shape")
both("C2 F.pad 4-tuple", "MF.pad(minitx.ones(1, 1, 2, 2), (1, 1, 1, 1)).shape")
both("C3 F.pad mode pos", "MF.pad(minitx.ones(1, 2, 4), (1, 1), 'reflect').shape")
both("C4 F.pad mode kw", "MF.pad(minitx.ones(1, 2, 4), (1, 1), mode='reflect').shape")
both("C5 layer_norm", "MF.layer_norm(minitx.ones(2, 8), (8,)).shape")
both("C6 CE weight pos", "MF.cross_entropy(minitx.zeros(2, 3), minitx.tensor([0, 1]), minitx.ones(3))")
both("C7 CE (N,C,H,W)", "MF.cross_entropy(minitx.zeros(2, 3, 5, 5), minitx.zeros(2, 5, 5).long())")
both("C8 TransformerEncoder", "mnn.TransformerEncoder(mnn.Linear(2, 2), 2)")
both("C9 torch.max(a, b)", "MF.max(minitx.tensor([1.0, 3.0]), minitx.tensor([2.0, 2.0]))", "torch.max(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 2.0]))")
both("C10 load .pt", "torch.save({'w': torch.ones(2)}, '/tmp/port_sweep2/t.pt');; minitx.load('/tmp/port_sweep2/t.pt')", "torch.load('/tmp/port_sweep2/t.pt')")
both("C11 where 1-arg", "MF.where(minitx.tensor([1, 0, 3]) > 0)", "torch.where(torch.tensor([1, 0, 3]) > 0)")
