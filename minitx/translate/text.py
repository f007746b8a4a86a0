"""The form text takes before it is tokenized: as Multi30k writes it, or as the published
Multi30k systems read and write it.

    "as-is"            the sentences as the corpus gives them; translations come out in that form
                       (cased, punctuation attached), and every BLEU minitx prints applies.
    "moses-lowercase"  each sentence lowercased, its punctuation normalized and cut into tokens by
                       the Moses tokenizer of its language: the multi30k-wmt18 release's
                       ``*.lc.norm.tok.*`` files, on which the published text-only systems train
                       (Wu et al. 2021's Transformer-Tiny among them). The model learns no case and
                       no attachment of punctuation; its translations are detokenized (still
                       lowercase) before they are scored or printed, so only the lowercased scores
                       (sacreBLEU's lowercased and the published tables' Moses BLEU) measure it.

The training and validation pairs go through ``TextForm.pairs``; sentences to translate through
``source``; translations come back through ``output``. Test references are never changed: every
score compares with the corpus as it is.
"""
from __future__ import annotations

TEXT_FORMS = {
    "as-is": "the sentences as Multi30k writes them",
    "moses-lowercase": "lowercased, punctuation normalized, cut by the Moses tokenizer (the published systems' "
                       "text; needs sacremoses); translations come out detokenized, lowercase",
}


def moses_tools(lang):
    """(normalizer, tokenizer, detokenizer) of sacremoses for ``lang``: the Moses scripts'
    normalize-punctuation.perl, tokenizer.perl and detokenizer.perl."""
    try:
        from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer
    except ImportError:
        raise ImportError("the published Multi30k text needs sacremoses, the Moses tokenizer: "
                          "pip install 'minitx[metrics]' (or pip install sacremoses)") from None
    return MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


def published_tokens(lines, lang, tools=None) -> list[str]:
    """Sentences as the published Multi30k systems read, write and score them: ``lowercase.perl
    | normalize-punctuation.perl -l lang | tokenizer.perl -l lang``, as the multi30k-wmt18
    release's ``*.lc.norm.tok.*`` files were made; no escaping (&quot; ...), which changes no
    token boundary. ``tools``: moses_tools(lang), when the caller keeps them."""
    normalizer, tokenizer, _ = tools or moses_tools(lang)
    return [tokenizer.tokenize(normalizer.normalize(line.lower()), escape=False, return_str=True) for line in lines]


class TextForm:
    """One direction's text form (a name of TEXT_FORMS, the source and target languages).
    ``lowercase_output``: the tokenizer lowercases (a word tokenizer with lowercase=True), so the
    translations come out lowercase in any form."""

    def __init__(self, form: str, src_lang: str, tgt_lang: str, lowercase_output: bool = False) -> None:
        if form not in TEXT_FORMS:
            raise ValueError(f"text form {form!r} is not one of {', '.join(TEXT_FORMS)}")
        self.form, self.src_lang, self.tgt_lang = form, src_lang, tgt_lang
        self.lowercase = form == "moses-lowercase" or lowercase_output  # the translations come out lowercase
        self._moses = {}  # lang -> moses_tools(lang), made on first use
        if form == "moses-lowercase":
            self._tools(src_lang)  # sacremoses missing is an error now, not after training

    def __repr__(self) -> str:
        return f"TextForm({self.form!r}, {self.src_lang!r}, {self.tgt_lang!r})"

    def score_note(self) -> str | None:
        """What to read of the scores when the translations are not in the corpus's form."""
        if not self.lowercase:
            return None
        why = f"text {self.form!r}" if self.form != "as-is" else "a lowercasing word tokenizer"
        return (f"{why}: the translations are lowercase, so the cased BLEU compares them with cased references; "
                "the lowercased and Moses-tokenized scores measure the model")

    def source(self, lines) -> list[str]:
        """Source sentences as the model reads them."""
        return self._write(lines, self.src_lang)

    def target(self, lines) -> list[str]:
        """Target sentences as the model learns to write them."""
        return self._write(lines, self.tgt_lang)

    def pairs(self, pairs) -> list[tuple[str, str]]:
        """(source, target) pairs, each side in the model's form."""
        return list(zip(self.source([s for s, _ in pairs]), self.target([t for _, t in pairs])))

    def output(self, lines) -> list[str]:
        """The model's translations (target form) as text."""
        if self.form == "as-is":
            return list(lines)
        _, _, detokenizer = self._tools(self.tgt_lang)
        return [detokenizer.detokenize(line.split()) for line in lines]

    def _write(self, lines, lang) -> list[str]:
        if self.form == "as-is":
            return list(lines)
        return published_tokens(lines, lang, self._tools(lang))

    def _tools(self, lang):
        if lang not in self._moses:
            self._moses[lang] = moses_tools(lang)
        return self._moses[lang]
