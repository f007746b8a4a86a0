# torch.optim.lr_scheduler._LRScheduler (the old base-class name, still exported by torch) is missing in minitx.
import minitx, torch
print("torch  has _LRScheduler:", hasattr(torch.optim.lr_scheduler, "_LRScheduler"))
print("minitx has _LRScheduler:", hasattr(minitx.optim.lr_scheduler, "_LRScheduler"))
