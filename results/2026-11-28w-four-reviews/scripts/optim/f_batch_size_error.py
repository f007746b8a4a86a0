# DataLoader(batch_size=0) / DataLoader(drop_last=1): the error names BatchSampler, a class the user never called.
import minitx
from minitx.utils.data import DataLoader
for kw in (dict(batch_size=0), dict(batch_size=-1), dict(batch_size=2.0), dict(batch_size=3, drop_last=1)):
    try: DataLoader(list(range(10)), **kw)
    except ValueError as e: print(kw, "->", e)
