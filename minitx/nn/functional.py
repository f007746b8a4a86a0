"""``minitx.functional`` under the path PyTorch code imports it from: ``import
minitx.nn.functional as F`` is ``import minitx.functional as F`` (one module, two names)."""
import sys

from minitx import functional

sys.modules[__name__] = functional
