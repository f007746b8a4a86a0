import numpy as np, torch, minitx, warnings
warnings.filterwarnings("ignore")
from minitx import optim
for lib, O in ((minitx, optim), (torch, torch.optim)):
    L = O.lr_scheduler
    class Warm(L.LRScheduler):
        def __init__(self, opt, warm, last_epoch=-1):
            self.warm = warm; super().__init__(opt, last_epoch)
        def get_lr(self):
            return [b * min(1.0, (self.last_epoch + 1) / self.warm) for b in self.base_lrs]
    p = lib.tensor(np.ones(1), requires_grad=True); opt = O.SGD([p], lr=1.0)
    s = Warm(opt, 4); seq = [s.get_last_lr()[0]]
    for _ in range(5): s.step(); seq.append(s.get_last_lr()[0])
    sd = s.state_dict()
    print(lib.__name__, seq, sorted(sd), hasattr(L, "_LRScheduler"))
