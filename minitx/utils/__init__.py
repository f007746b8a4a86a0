"""PyTorch's ``torch.utils`` under minitx's name: ``minitx.utils.data`` (datasets and DataLoader)."""
