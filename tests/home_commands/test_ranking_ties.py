"""A known operation's top k reads only the first k devices tied at the k-th best (``ranking._OperationOrder.top``):
the same k rows, in the same order, as reading every device that reaches it."""

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tracerag.home_commands.ranking import _kth_best, _penalised


def _top(row_device, values, k, repeat_penalty, trim):
    """The top k as ``top`` reads it: the devices whose best reaches the k-th best, trimmed or not."""
    table = SimpleNamespace(row_device=row_device)
    devices = int(row_device.max()) + 1
    best = np.full(devices, -np.inf)
    np.maximum.at(best, row_device, values)
    threshold = _kth_best(best, k) if 0 < k < devices else -np.inf
    reaching = np.flatnonzero(np.isfinite(best) & (best >= threshold))
    if trim and len(reaching) > k > 0:
        tied = best[reaching] == threshold
        reaching = reaching[~tied | (np.cumsum(tied) <= k)]
    rows = np.flatnonzero(np.isin(row_device, reaching))
    keep = np.isfinite(values[rows]) & (values[rows] >= threshold)
    return _penalised(table, rows[keep], values[rows][keep], k, repeat_penalty)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=40), st.data(), st.integers(1, 12),
       st.sampled_from([0.0, 0.05, 0.3]))
def test_the_first_k_tied_devices_give_the_top_k_every_device_gives(rows_per_device, data, k, repeat_penalty):
    row_device = np.repeat(np.arange(len(rows_per_device)), rows_per_device)
    # few distinct values: devices tie at the k-th best, and a device's rows tie with each other
    values = np.asarray(data.draw(st.lists(st.sampled_from([-np.inf, 0.0, 0.05, 0.1, 1.0]), min_size=len(row_device),
                                           max_size=len(row_device))))
    assert _top(row_device, values, k, repeat_penalty, trim=True).tolist() == \
        _top(row_device, values, k, repeat_penalty, trim=False).tolist()
