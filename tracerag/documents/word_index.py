"""The in-memory BM25 word index of the hybrid retriever's lexical channel.

Built from a fixed list of texts when a store keeps no word index of its own: a compressed-sparse layout in
numpy arrays (per term, the rows it occurs in and their BM25 weight). Tokens are
:func:`~..stores.word_tokens.word_tokens`: NFKC-lower-cased words with English plurals folded, plus single
characters and bigrams inside CJK runs (no word segmenter needed). Weights sit on the grid of
:mod:`..stores.bm25_grid` and, up to its ``EXACT_ROWS`` texts, are summed in float64, exactly, so a score does
not depend on the order of its additions: a batch is summed in as few numpy calls as its shape allows and still
gives bitwise the scores of each query alone (above, one float32 add per (query, word), the same alone).
Kept apart from :mod:`.hybrid`, which fuses it with the dense channel, because it is a self-contained index:
it knows texts and scores, not stores or fusion.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..stores.bm25_grid import exact_sums, on_grid
from ..stores.word_tokens import BREAK, batch_words, fold_plural, unfolded_words, word_tokens

__all__ = ["WordIndex"]

_DENSE_SHARE = 8  # a term in at least 1/8 of the rows keeps a dense row of weights (WordIndex._dense_rows) ...
_DENSE_BYTES = 64 << 20  # ... within 64 MB for all of them (16 terms at 1M rows, 160 at 100k)
_BLOCK_VALUES = 1 << 17  # exact sums: queries summed together hold at most this many float64 sums (1 MB)
_WORD_CACHE = 1 << 16  # words whose term number is kept (about 6 MB)
_CALL_ROWS = 4096  # one numpy call costs about as much as adding this many elements (see _product_pays)
_BREAK_TERM = -2  # the term number of batch_words' BREAK between two queries (-1: a word not in the index)
_BREAKS = {BREAK: _BREAK_TERM, BREAK.encode(): _BREAK_TERM}


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
        self.weights = on_grid((idf[terms] * tf * (k1 + 1) / (tf + norm)).astype(np.float32))
        self.count = len(texts)
        self.exact = exact_sums(self.count)
        self._dense_slot, self._dense = self._dense_rows(df)
        self._term_table = self._table()
        self._word_terms: dict[bytes | str, int] = dict(_BREAKS)

    def _dense_rows(self, df: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(per term, its row of the matrix or -1; the matrix): every row's weight (0 where absent) of the
        terms in at least 1/:data:`_DENSE_SHARE` of the rows, most frequent first, within :data:`_DENSE_BYTES`.

        Adding such a row is one contiguous vector add (or a share of a matrix product), against a scattered
        add per posting: these few words ("the", "of", ...) hold most of the postings a query touches. Adding
        0.0 leaves a sum as it was, so the scores are bitwise those of the postings."""
        slot = np.full(len(self.vocab), -1, dtype=np.int64)
        if not self.count:
            return slot, np.zeros((0, 0), dtype=np.float32)
        common = np.flatnonzero(df * _DENSE_SHARE >= self.count)
        common = common[np.argsort(-df[common], kind="stable")][: _DENSE_BYTES // (4 * self.count)]
        dense = np.zeros((len(common), self.count), dtype=np.float32)
        for i, term in enumerate(common.tolist()):
            lo, hi = self.indptr[term], self.indptr[term + 1]
            dense[i, self.rows[lo:hi]] = self.weights[lo:hi]
        slot[common] = np.arange(len(common))
        return slot, dense

    def _table(self) -> np.ndarray:
        """Per term (first posting, end, dense row) side by side, a token's one cache line, set for the exact
        sums to read every token the same way, with no mask: a term with a dense row has no postings here (it
        is added from the row), one without has the row number past the last dense row, and two rows more at
        the end, indexed by -2 and -1 (:data:`_BREAK_TERM`, a word not in the index), have neither."""
        dense = self._dense_slot >= 0
        table = np.stack([self.indptr[:-1], np.where(dense, self.indptr[:-1], self.indptr[1:]),
                          np.where(dense, self._dense_slot, len(self._dense))], axis=1)
        return np.concatenate([table, [[0, 0, len(self._dense)]] * 2])

    def scores(self, query: str) -> np.ndarray:
        """(count,) float32 BM25 scores of every text for ``query`` (0 where no query word occurs)."""
        return self.scores_batch([query])[0]

    def scores_batch(self, queries: Sequence[str]) -> np.ndarray:
        """(len(queries), count) float32 BM25 scores of a batch, each query's row bitwise what it scores alone.

        Exact sums (:mod:`..stores.bm25_grid`; up to its ``EXACT_ROWS`` texts): the queries are summed in blocks
        whose float64 sums fit a core's cache, the common terms' dense rows by a matrix product of the block's
        (query x term) counts, the other terms' postings by one scattered add for the block. Otherwise each
        (query, term) pair is one float32 vector add of a dense row or ``np.add.at`` of its postings, in the
        query's word order."""
        if not self.exact:  # each query summed in one row that stays in cache, then copied out
            out = np.empty((len(queries), self.count), dtype=np.float32)
            sums = np.empty(self.count, dtype=np.float32)
            for i, query in enumerate(queries):
                sums.fill(0.0)
                for term, times in Counter(t for t in self._term_ids(query) if t >= 0).items():  # word order
                    self._add_term(sums, term, times)
                out[i] = sums
            return out
        query, term = self._tokens(queries)
        size = max(1, _BLOCK_VALUES // max(self.count, 1))
        if len(queries) <= size:  # one block
            return self._sums(query, term, len(queries)).astype(np.float32)
        out = np.empty((len(queries), self.count), dtype=np.float32)
        starts = np.searchsorted(query, np.arange(0, len(queries) + size, size)).tolist()
        for first, a, z in zip(range(0, len(queries), size), starts, starts[1:], strict=False):
            block = out[first : first + size]
            block[...] = self._sums(query[a:z] - first, term[a:z], len(block))
        return out

    def _add_term(self, out: np.ndarray, term: int, times: int) -> None:
        """Add ``times`` x the term's weights into one query's float32 scores (each row at most once per term)."""
        slot = self._dense_slot[term]
        if slot >= 0:
            out += self._dense[slot] if times == 1 else times * self._dense[slot]
            return
        lo, hi = self.indptr[term], self.indptr[term + 1]
        np.add.at(out, self.rows[lo:hi], self.weights[lo:hi] if times == 1 else times * self.weights[lo:hi])

    def _tokens(self, queries: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(query, term) of each of the batch's tokens, by query, a repeated word as often as it occurs (exact
        sums add its weight that many times, which is the weight times its count), the words not in the index
        (-1) and the BREAK between two queries (:data:`_BREAK_TERM`) included: their rows of the term table add
        nothing. The batch's words come from one split and one pass of lookups, queries told apart by the term
        of their BREAK."""
        words = batch_words(queries) if len(queries) > 1 else None
        if words is None:  # a lone question, or a batch with CJK: query by query
            terms = []
            for i, query in enumerate(queries):
                terms += [_BREAK_TERM, *self._term_ids(query)] if i else self._term_ids(query)
        else:
            terms = self._word_ids(words)
        term = np.array(terms, dtype=np.int64)
        return np.cumsum(term == _BREAK_TERM), term

    def _term_ids(self, query: str) -> list[int]:
        """The term number of each of the query's tokens (-1: not in the index)."""
        words = unfolded_words(query)
        if words is None:  # CJK characters and bigrams
            return [self.vocab.get(t, -1) for t in word_tokens(query)]
        return self._word_ids(words)

    def _word_ids(self, words: list[bytes] | list[str]) -> list[int]:
        """The term number of each word (-1: not in the index; BREAK: :data:`_BREAK_TERM`), each distinct
        word looked up once per index (:data:`_WORD_CACHE`) rather than folded and found in the vocabulary on
        every query."""
        ids = list(map(self._word_terms.get, words))
        if None in ids:
            if len(self._word_terms) > _WORD_CACHE:
                self._word_terms.clear()
                self._word_terms.update(_BREAKS)
            for i, word in enumerate(words):
                if ids[i] is None:
                    token = fold_plural(word.decode() if type(word) is bytes else word)
                    ids[i] = self._word_terms[word] = self.vocab.get(token, -1)
        return ids

    def _sums(self, query: np.ndarray, term: np.ndarray, count: int) -> np.ndarray:
        """(count, rows) float64 exact sums of one block's (query, term) tokens: the common terms' dense rows
        (:meth:`_dense_sums`), then every other token's postings in one scattered add."""
        if count == 1:  # one question: a call per token costs less than arranging the tokens for a batch
            out = np.zeros((1, self.count))
            sums = out[0]
            for lo, hi, slot in self._term_table[term].tolist():
                if slot < len(self._dense):
                    np.add(sums, self._dense[slot], out=sums)
                elif hi > lo:  # float64 weights: np.add.at's fast loop (casting in it is five times slower)
                    np.add.at(sums, self.rows[lo:hi], self.weights[lo:hi].astype(np.float64))
            return out
        lo, hi, slot = self._term_table[term].T
        out = self._dense_sums(query, slot, count)
        lengths = hi - lo  # 0 for a term with a dense row
        ends = np.cumsum(lengths)
        if len(ends) and ends[-1]:  # the o-th posting gathered, of a token ending at ends, is hi - ends + o
            postings = np.repeat(hi - ends, lengths) + np.arange(ends[-1])
            where = np.repeat(query * self.count, lengths) + self.rows[postings]
            np.add.at(out.reshape(-1), where, self.weights[postings].astype(np.float64))
        return out

    def _dense_sums(self, query: np.ndarray, slot: np.ndarray, count: int) -> np.ndarray:
        """(count, rows) float64: the sums of the block's common terms' dense rows (``slot`` per token, past the
        last row for a term without one), by a matrix product of the (query x term) counts where that costs
        less than one vector add per token (a call's overhead against short rows)."""
        width = len(self._dense) + 1  # the last column counts the tokens without a dense row
        counts = np.bincount(query * width + slot, minlength=count * width).reshape(count, width)[:, :-1]
        used = np.flatnonzero(counts.any(axis=0))
        counts = counts[:, used]
        tokens = int(counts.sum())
        if _product_pays(tokens, len(used), count, self.count):  # float32 rows cast: half the bytes to read
            return np.matmul(counts, self._dense[used].astype(np.float64))  # the counts cast inside
        out = np.zeros((count, self.count))
        for i, column in zip(*np.nonzero(counts), strict=True):
            for _ in range(counts[i, column]):  # each add exact: no product by the count in float32
                np.add(out[i], self._dense[used[column]], out=out[i])
        return out

    def __len__(self) -> int:
        return self.count


def _product_pays(tokens: int, terms: int, queries: int, rows: int) -> bool:
    """Whether a matrix product adds ``tokens`` dense rows of ``terms`` distinct terms into ``queries`` sums of
    ``rows`` faster than one vector add per token. Costs in the time of one element's add, as measured on
    PubMedQA and 10,000 synthetic rows (``benchmarks/bench_bm25_parts.py --dense``): a numpy call about
    :data:`_CALL_ROWS`; the product's ten calls, its gather and cast about 3/4 per element of the rows it uses,
    and each multiply-add about 1/8."""
    return tokens * (_CALL_ROWS + rows) > 10 * _CALL_ROWS + terms * rows * (0.75 + queries / 8)
