"""Order statistics shared by the profiler, the run recorder and the validation harness."""


def quantile(values, q):
    """The q-quantile of `values` by linear interpolation between order statistics."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
