"""PyTorch's ``torch.utils`` under minitx's name: ``minitx.utils.data`` (datasets and DataLoader)."""
from minitx.utils import data  # noqa: F401  (minitx.utils.data after import minitx, as torch's)
