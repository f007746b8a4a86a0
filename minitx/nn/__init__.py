"""Layers and models: Module, Parameter, Linear, Embedding, LayerNorm, attention, Transformer,
and the encoder-only models (EncoderModel and its masked-LM and classification heads); PyTorch's
MultiheadAttention and Transformer layers and stacks (torch_transformer.py); nn.init's initializers and nn.utils' helpers, as PyTorch's."""
from minitx.nn import functional, init, utils  # (functional: minitx.functional, as torch.nn.functional)
from minitx.nn.encoder import EncoderClassifier, EncoderModel, MaskedLanguageModel, MaskedLMHead, mask_tokens
from minitx.nn.attention import LearnedPositionalEmbedding, MultiHeadAttention, SinusoidalPositionalEncoding
from minitx.nn.layers import (CELU, ELU, GELU, GLU, SELU, BatchNorm1d, BatchNorm2d, BatchNorm3d, Bilinear, Dropout,
                              Embedding, EmbeddingBag, Flatten, GroupNorm, Hardsigmoid, Hardswish, Hardtanh, Identity, LayerNorm, LeakyReLU, Linear,
                              LogSigmoid, LogSoftmax, Mish, ModuleDict, ModuleList, ParameterDict, ParameterList,
                              PReLU, ReLU, ReLU6, RMSNorm, Sequential, Sigmoid, SiLU, Softmax, Softmin, Softplus,
                              Softsign, Tanh, Threshold, Unflatten)
from minitx.nn.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss,
                            HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss,
                            MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PoissonNLLLoss,
                            SmoothL1Loss, SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from minitx.nn.module import Module
from minitx.nn.parameter import Parameter
from minitx.nn.transformer import (PRESETS, DecoderCache, DecoderLayer, EncoderLayer, FeedForward,
                                   Transformer)

__all__ = [
    "Module", "Parameter", "Linear", "Bilinear", "Embedding", "EmbeddingBag", "LayerNorm", "Dropout", "ReLU", "GELU", "Sequential",
    "ModuleList", "MultiHeadAttention", "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding",
    "FeedForward", "EncoderLayer", "DecoderLayer", "DecoderCache", "Transformer", "PRESETS", "init", "utils",
    "EncoderModel", "MaskedLMHead", "MaskedLanguageModel", "EncoderClassifier", "mask_tokens",
    "SiLU", "Tanh", "Sigmoid", "Softmax", "Identity", "Flatten", "Unflatten", "ModuleDict", "ParameterList",
    "ParameterDict", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss",
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
    "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "GroupNorm", "RMSNorm", "LogSoftmax", "Softmin", "LeakyReLU", "ELU", "CELU", "SELU", "ReLU6", "Hardsigmoid",
    "Hardswish", "Mish", "Hardtanh", "Threshold", "Softplus", "LogSigmoid", "Softsign", "GLU", "PReLU",
]

# convolution, pooling and resampling layers
from minitx.nn.conv import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,  # noqa: E402
                            AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, Conv1d, Conv2d,
                            Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, Fold, LPPool1d, LPPool2d,
                            LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, Unfold,
                            Upsample, UpsamplingBilinear2d, UpsamplingNearest2d)

__all__ += ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d",
            "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
            "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Unfold", "Fold", "AdaptiveAvgPool1d",
            "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
            "LPPool1d", "LPPool2d", "LPPool3d"]

# PyTorch's attention and Transformer layers, under its names and arguments
from minitx.nn.torch_transformer import (MultiheadAttention, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402
                                         TransformerEncoder, TransformerEncoderLayer)

__all__ += ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
            "TransformerDecoder"]

# recurrent layers
from minitx.nn.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: E402

__all__ += ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNNCellBase"]

# more layers composed of the ops: channel dropout, instance norm, local response norm, padding, pixel and
# channel shuffle, distances
from minitx.nn.layers import (ChannelShuffle, CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: E402
                              ConstantPad2d, ConstantPad3d, CosineSimilarity, Dropout1d, LocalResponseNorm,
                              Dropout2d, Dropout3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, PairwiseDistance,
                              PixelShuffle, PixelUnshuffle, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                              ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)

__all__ += ["Dropout1d", "Dropout2d", "Dropout3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
            "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
            "CircularPad1d", "CircularPad2d", "CircularPad3d", "PixelShuffle", "PixelUnshuffle", "CosineSimilarity", "PairwiseDistance",
            "LocalResponseNorm", "ChannelShuffle"]

# the CTC loss, for sequence labelling without alignments
from minitx.nn.loss import CTCLoss  # noqa: E402

__all__ += ["CTCLoss"]

# more activations and dropouts: the shrinks, randomized leaky ReLU, Softmax2d, alpha dropout
from minitx.nn.layers import (AlphaDropout, FeatureAlphaDropout, Hardshrink, RReLU, Softmax2d,  # noqa: E402
                              Softshrink, Tanhshrink)

__all__ += ["Hardshrink", "Softshrink", "Tanhshrink", "RReLU", "Softmax2d", "AlphaDropout", "FeatureAlphaDropout"]

# the Lazy modules (sizes read from the first input), nn.Buffer and the uninitialized parameters and buffers;
# fractional max pooling; the adaptive softmax; PyTorch's legacy CrossMapLRN2d
from minitx.nn.lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d,  # noqa: E402
                            LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
                            LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
from minitx.nn.parameter import Buffer, UninitializedBuffer, UninitializedParameter  # noqa: E402
from minitx.nn.conv import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402
from minitx.nn.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from minitx.nn.layers import CrossMapLRN2d  # noqa: E402

__all__ += ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "Buffer", "UninitializedParameter", "UninitializedBuffer",
            "FractionalMaxPool2d", "FractionalMaxPool3d", "AdaptiveLogSoftmaxWithLoss", "CrossMapLRN2d"]
