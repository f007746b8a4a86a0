"""The Multi30k translation application: train, translate, evaluate (``python -m minitx.translate``)."""
from minitx.translate.decoding import beam_search, greedy_decode
from minitx.translate.evaluation import bleu_scores, translate_sentences
from minitx.translate.recipes import DEFAULTS, HELP, RECIPES, build_config, validate_config

__all__ = ["greedy_decode", "beam_search", "translate_sentences", "bleu_scores", "build_config", "validate_config",
           "RECIPES", "DEFAULTS", "HELP"]
