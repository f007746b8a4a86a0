"""Differentiable ops: one ``Function`` subclass per op, forward and backward on raw arrays.

Use them through ``minitx.functional`` (``F.softmax(x)``) or tensor methods; the classes are
here to be read, and for writing new ops the same way.
"""
from minitx.ops.elementwise import *  # noqa: F401,F403
from minitx.ops.reduction import *  # noqa: F401,F403
from minitx.ops.shape import *  # noqa: F401,F403
from minitx.ops.linalg import *  # noqa: F401,F403
from minitx.ops.nn import *  # noqa: F401,F403
from minitx.ops.attention import *  # noqa: F401,F403

# more elementwise math, activations, scans, indexing, losses and convolution
from minitx.ops.unary import *  # noqa: F401,F403
from minitx.ops.activation import *  # noqa: F401,F403
from minitx.ops.scan import *  # noqa: F401,F403
from minitx.ops.indexing import *  # noqa: F401,F403
from minitx.ops.loss import *  # noqa: F401,F403
from minitx.ops.conv import *  # noqa: F401,F403
