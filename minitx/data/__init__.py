"""Data for machine translation: Multi30k loading, tokenizers, vocabularies, batching.

Everything here is plain Python + NumPy (no autograd involved).

* :mod:`~minitx.data.multi30k` -- find, download and read the Multi30k sentence pairs.
* :mod:`~minitx.data.bpe` -- a byte-pair-encoding subword tokenizer (lossless).
* :mod:`~minitx.data.word` -- a simple word-level tokenizer (not lossless).
* :mod:`~minitx.data.vocab` -- token <-> id maps with ``<pad> <bos> <eos> <unk>`` at ids 0..3.
* :mod:`~minitx.data.batching` -- length filtering, token-budget batching and padding.
"""

from .batching import (Batch, batch_by_tokens, count_oversize, example_lengths, filter_by_length, make_batch,
                       pad_batch, static_shape)
from .bpe import BYTE_TOKENS, WORD_BOUNDARY, BPETokenizer, pretokenize
from .multi30k import (
    DATA_DIR_ENV,
    EXPECTED_LINES,
    KNOWN_SHA256,
    LANGUAGES,
    SPLITS,
    ChecksumError,
    DataFileError,
    DataNotFoundError,
    candidate_dirs,
    default_cache_dir,
    download_file,
    ensure_files,
    find_data_dir,
    load_pairs,
    read_pairs,
    read_lines,
    verify_file,
)
from .tokenizer import Tokenizer, load_tokenizer
from .vocab import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID, Vocab, strip_special_ids
from .word import WordTokenizer

__all__ = [
    # multi30k
    "SPLITS",
    "LANGUAGES",
    "KNOWN_SHA256",
    "EXPECTED_LINES",
    "DATA_DIR_ENV",
    "DataNotFoundError",
    "ChecksumError",
    "DataFileError",
    "candidate_dirs",
    "default_cache_dir",
    "find_data_dir",
    "ensure_files",
    "download_file",
    "verify_file",
    "read_lines",
    "load_pairs",
    "read_pairs",
    # tokenizers and vocabularies
    "Tokenizer",
    "load_tokenizer",
    "BPETokenizer",
    "WORD_BOUNDARY",
    "BYTE_TOKENS",
    "pretokenize",
    "WordTokenizer",
    "Vocab",
    "SPECIAL_TOKENS",
    "PAD_ID",
    "BOS_ID",
    "EOS_ID",
    "UNK_ID",
    "strip_special_ids",
    # batching
    "Batch",
    "make_batch",
    "static_shape",
    "pad_batch",
    "batch_by_tokens",
    "count_oversize",
    "example_lengths",
    "filter_by_length",
]
