"""What the token embeddings learned: nearest neighbours by cosine similarity, and analogies.

The table is the input embedding matrix E [V, d] of a trained model: the pretrained encoder's
(a run of ``python -m minitx.encoder pretrain``) or a translation model's source (or target)
embedding (a run of ``python -m minitx.translate train``). Rows are BPE *pieces*, not words:
``▁Hund`` is "Hund" after a space, ``Hund`` the same letters at a sentence start or inside a
longer word. A word that the tokenizer cuts into several pieces is represented by the mean of
their rows (and said so).

    cos(u, v) = u.v / (|u| |v|)           neighbours(w) = the k pieces p != w of largest cos(E_w, E_p)
    analogy a - b + c: the k pieces p not in {a, b, c} of largest cos(E_a - E_b + E_c, E_p)

Special ids, [MASK] and the byte-fallback tokens are never candidates.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minitx import backend
from minitx.serialization import read_json
from minitx.data import BYTE_TOKENS, WORD_BOUNDARY


@dataclass
class EmbeddingTable:
    """Rows of an embedding matrix with the tokenizer that names them."""

    matrix: np.ndarray  # [V, d] (V may exceed the tokenizer's size by [MASK])
    tokenizer: object
    source: str  # what the table is, for the report

    def __post_init__(self):
        norms = np.linalg.norm(self.matrix, axis=1, keepdims=True)
        self.unit = self.matrix / np.maximum(norms, 1e-12)
        vocab = self.tokenizer.vocab
        names = set(BYTE_TOKENS)
        self.candidate = np.zeros(len(self.matrix), dtype=bool)
        self.candidate[:len(vocab)] = [not vocab.is_special(i) and vocab.id_to_token(i) not in names
                                       for i in range(len(vocab))]

    def piece(self, index) -> str:
        return self.tokenizer.vocab.id_to_token(int(index))

    def lookup(self, word: str) -> tuple:
        """(vector, piece ids) of a word as it reads after a space; its learned pieces' mean
        when it is cut into several. The lone space marker '▁' (a word whose first letter does
        not join it) and byte tokens are no part of the word's meaning, and are left out."""
        spelled = self.tokenizer.encode_ids(" " + word.strip())
        ids = [i for i in spelled if self.candidate[i] and self.piece(i) != WORD_BOUNDARY]
        if not ids:  # ('' and '   ' are the lone '▁'; a word of unseen letters is '▁' and bytes)
            raise ValueError(f"neighbours: word {word!r} has no learned piece (the tokenizer spells it "
                             f"{' '.join(self.piece(i) for i in spelled) or 'as nothing'}: only the space marker, "
                             f"byte or special tokens)")
        return self.matrix[ids].mean(axis=0), ids

    def nearest(self, vector, k=8, exclude=()) -> list:
        """The k (piece, cosine) most similar to vector among the candidates."""
        scores = self.unit @ (vector / max(float(np.linalg.norm(vector)), 1e-12))
        scores = np.where(self.candidate, scores, -np.inf)
        scores[list(exclude)] = -np.inf
        best = np.argsort(-scores, kind="stable")[:k]
        return [(self.piece(i), float(scores[i])) for i in best if np.isfinite(scores[i])]

    def neighbours(self, word, k=8) -> dict:
        vector, ids = self.lookup(word)
        return {"word": word, "pieces": [self.piece(i) for i in ids], "neighbours": self.nearest(vector, k, ids)}

    def analogy(self, a, b, c, k=5) -> dict:
        """Pieces nearest to E_a - E_b + E_c ("a is to b as ? is to c"), a, b and c excluded."""
        (va, ia), (vb, ib), (vc, ic) = self.lookup(a), self.lookup(b), self.lookup(c)
        return {"query": f"{a} - {b} + {c}", "pieces": [[self.piece(i) for i in ids] for ids in (ia, ib, ic)],
                "answers": self.nearest(va - vb + vc, k, ia + ib + ic)}


def load_table(run_dir, side="src") -> EmbeddingTable:
    """The embedding table of a pretraining run or of a translation run (``side`` 'src' or 'tgt'
    picks the embedding), told apart by what the run's config.json says it is: a file of the
    other kind left beside it is no part of it."""
    run_dir = Path(run_dir)
    path = run_dir / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is neither a pretraining run nor a translation run (no config.json)")
    config = read_json(path)
    kind = None if not isinstance(config, dict) else (
        "pretraining" if "mask_prob" in config else "translation" if "src_lang" in config else None)
    if kind is None:
        raise ValueError(f"{path} is neither a pretraining run's configuration (it has no mask_prob) nor a "
                         "translation run's (no src_lang)")
    if kind == "pretraining":
        from minitx.encoder.pretraining import load_pretrained

        _, model, vocab = load_pretrained(run_dir)
        return EmbeddingTable(backend.to_numpy(model.encoder.embed.weight.data), vocab.tokenizer,
                              f"the pretrained encoder's embeddings ({run_dir})")
    from minitx.translate.training import load_run

    if side not in ("src", "tgt"):
        raise ValueError(f"neighbours: side must be 'src' or 'tgt', got {side!r}")
    _, model, src_tok, tgt_tok = load_run(run_dir)
    embedding = model.src_embed if side == "src" else model.tgt_embed
    shared = " (shared by both languages)" if model.src_embed is model.tgt_embed else ""
    return EmbeddingTable(backend.to_numpy(embedding.weight.data), src_tok if side == "src" else tgt_tok,
                          f"the translation model's {side} embeddings{shared} ({run_dir})")


def report(table: EmbeddingTable, words=(), analogies=(), k=8) -> str:
    """The neighbours of each word and the answers of each analogy, a line each. A word of no
    learned piece (an emoji, say) gets a line saying so, and the others are still looked up."""
    lines = [f"{table.source}: {table.matrix.shape[0]} rows of {table.matrix.shape[1]}"]
    for word in words:
        try:
            found = table.neighbours(word, k)
        except ValueError as error:
            lines.append(f"{word}: skipped: {str(error).removeprefix('neighbours: ')}")
            continue
        cut = "" if len(found["pieces"]) == 1 else f" (mean of {len(found['pieces'])} pieces)"
        lines.append(f"{word} = {' '.join(found['pieces'])}{cut}: "
                     + ", ".join(f"{p} {s:.2f}" for p, s in found["neighbours"]))
    for a, b, c in analogies:
        try:
            found = table.analogy(a, b, c)
        except ValueError as error:
            lines.append(f"{a} - {b} + {c}: skipped: {str(error).removeprefix('neighbours: ')}")
            continue
        lines.append(f"{found['query']} ~ " + ", ".join(f"{p} {s:.2f}" for p, s in found["answers"]))
    return "\n".join(lines)


#: a default probe for Multi30k: common caption words in both languages
DEFAULT_WORDS = ("dog", "Hund", "woman", "Frau", "red", "rot", "running", "ball", "street")
DEFAULT_ANALOGIES = (("woman", "man", "boy"), ("Frau", "Mann", "Junge"), ("dogs", "dog", "man"))
