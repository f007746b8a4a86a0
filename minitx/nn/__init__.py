"""Layers and models: Module, Parameter, Linear, Embedding, LayerNorm, attention, Transformer."""
from minitx.nn import init
from minitx.nn.attention import LearnedPositionalEmbedding, MultiHeadAttention, SinusoidalPositionalEncoding
from minitx.nn.layers import GELU, Dropout, Embedding, LayerNorm, Linear, ModuleList, ReLU, Sequential
from minitx.nn.module import Module
from minitx.nn.parameter import Parameter
from minitx.nn.transformer import (PRESETS, DecoderCache, DecoderLayer, EncoderLayer, FeedForward,
                                   Transformer)

__all__ = [
    "Module", "Parameter", "Linear", "Embedding", "LayerNorm", "Dropout", "ReLU", "GELU", "Sequential",
    "ModuleList", "MultiHeadAttention", "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding",
    "FeedForward", "EncoderLayer", "DecoderLayer", "DecoderCache", "Transformer", "PRESETS", "init",
]

# convolution and pooling layers
from minitx.nn.conv import AvgPool2d, Conv1d, Conv2d, MaxPool2d  # noqa: E402

__all__ += ["Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d"]
