"""The in-memory BM25 word index of the hybrid retriever's lexical channel.

Built from a fixed list of texts when a store keeps no word index of its own: a compressed-sparse layout in
numpy arrays (per term, the rows it occurs in and their BM25 weight), so a query costs one vector add per
distinct query term. Tokens are :func:`~..stores.word_tokens.word_tokens`: NFKC-lower-cased words with English
plurals folded, plus single characters and bigrams inside CJK runs (no word segmenter needed). Kept apart from
:mod:`.hybrid`, which fuses it with the dense channel, because it is a self-contained index: it knows texts and
scores, not stores or fusion.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..stores.word_tokens import word_tokens

__all__ = ["WordIndex"]

_DENSE_SHARE = 8  # a term in at least 1/8 of the rows keeps a dense row of weights (WordIndex._dense_rows) ...
_DENSE_BYTES = 64 << 20  # ... within 64 MB for all of them (16 terms at 1M rows, 160 at 100k)


class WordIndex:
    """BM25 over a fixed list of texts, held as per-term postings in numpy arrays (no scipy)."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        vocab: dict[str, int] = {}
        term_ids: list[int] = []
        token_counts: list[int] = []
        for text in texts:
            tokens = word_tokens(text)
            token_counts.append(len(tokens))
            term_ids.extend([vocab.setdefault(t, len(vocab)) for t in tokens])
        n = max(len(texts), 1)
        lengths = np.asarray(token_counts, dtype=np.float32)
        terms = np.asarray(term_ids, dtype=np.int64)
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths.astype(np.int64))
        keys, tf = np.unique(terms * n + rows, return_counts=True)  # sorted by term, then row
        terms, rows = keys // n, keys % n
        df = np.bincount(terms, minlength=len(vocab))
        idf = np.log1p((len(texts) - df + 0.5) / (df + 0.5))
        avg_length = float(lengths.mean()) if len(texts) and lengths.mean() > 0 else 1.0
        norm = k1 * (1 - b + b * lengths[rows] / avg_length)
        self.vocab = vocab
        self.indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        self.rows = rows.astype(np.int32)
        self.weights = (idf[terms] * tf * (k1 + 1) / (tf + norm)).astype(np.float32)
        self.count = len(texts)
        self._dense = self._dense_rows(df)

    def _dense_rows(self, df: np.ndarray) -> dict[int, np.ndarray]:
        """Every row's weight (0 where absent) of the terms in at least 1/:data:`_DENSE_SHARE` of the rows,
        most frequent first, within :data:`_DENSE_BYTES`.

        Adding such a row is one contiguous vector add, against a scattered add per posting: these few
        words ("the", "of", ...) hold most of the postings a query touches. Adding 0.0 leaves a score as it
        was, so the scores are bitwise those of the postings."""
        dense: dict[int, np.ndarray] = {}
        if not self.count:
            return dense
        common = np.flatnonzero(df * _DENSE_SHARE >= self.count)
        for term in common[np.argsort(-df[common], kind="stable")][: _DENSE_BYTES // (4 * self.count)].tolist():
            row = np.zeros(self.count, dtype=np.float32)
            lo, hi = self.indptr[term], self.indptr[term + 1]
            row[self.rows[lo:hi]] = self.weights[lo:hi]
            dense[term] = row
        return dense

    def _add_term(self, out: np.ndarray, term: int, times: int) -> None:
        """Add ``times`` x the term's weights into one query's scores (each row at most once per term)."""
        dense = self._dense.get(term)
        if dense is not None:
            out += dense if times == 1 else times * dense
            return
        lo, hi = self.indptr[term], self.indptr[term + 1]
        np.add.at(out, self.rows[lo:hi], self.weights[lo:hi] if times == 1 else times * self.weights[lo:hi])

    def scores(self, query: str) -> np.ndarray:
        """(count,) float32 BM25 scores of every text for ``query`` (0 where no query word occurs)."""
        out = np.zeros(self.count, dtype=np.float32)
        for token, times in Counter(word_tokens(query)).items():
            term = self.vocab.get(token)
            if term is not None:
                self._add_term(out, term, times)
        return out

    def scores_batch(self, queries: Sequence[str]) -> np.ndarray:
        """(len(queries), count) float32 BM25 scores of a batch: the sparse product of the queries' term counts
        and the term x row weights, accumulated into one matrix, each query's row as :meth:`scores` fills it
        (so bitwise the same scores, and the batch's memory is one allocation).

        A (query, term) pair adds a common term's dense row (one vector add) or its postings (one
        ``np.add.at`` over the stored arrays: no copy, one pass where ``out[rows] += w`` is a gather and a
        scatter).
        """
        out = np.zeros((len(queries), self.count), dtype=np.float32)
        for i, query in enumerate(queries):
            row = out[i]
            for token, times in Counter(word_tokens(query)).items():
                term = self.vocab.get(token)
                if term is not None:
                    self._add_term(row, term, times)
        return out

    def __len__(self) -> int:
        return self.count
