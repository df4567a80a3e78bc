"""What the voice tests read of the level recordings (voice_pages.py): a level
timeline on a common grid, how alike two of them are at the best delay, when
words start, and when sound last was."""


def binned(levels, start, end, step_ms=20.0, column=1):
    """The mean of `column` of `[t, level, volume]` samples in each `step_ms`
    bin from `start` to `end` (epoch ms); a bin with no sample repeats the last."""
    count = max(0, int((end - start) // step_ms))
    sums = [0.0] * count
    counts = [0] * count
    for sample in levels:
        index = int((sample[0] - start) // step_ms)
        if 0 <= index < count:
            sums[index] += sample[column]
            counts[index] += 1
    out, last = [], 0.0
    for total, n in zip(sums, counts):
        last = total / n if n else last
        out.append(last)
    return out


def correlation(a, b):
    n = min(len(a), len(b))
    if n < 10:
        return 0.0
    a, b = a[:n], b[:n]
    mean_a, mean_b = sum(a) / n, sum(b) / n
    cov = sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b))
    var_a = sum((x - mean_a) ** 2 for x in a)
    var_b = sum((y - mean_b) ** 2 for y in b)
    if var_a <= 0 or var_b <= 0:
        return 0.0
    return cov / (var_a * var_b) ** 0.5


def best_delay(sent, heard, step_ms=20.0, most_ms=1500.0):
    """(delay in ms, correlation) at which `heard` is most like `sent` later."""
    best = (0.0, -1.0)
    for shift in range(0, int(most_ms // step_ms) + 1):
        value = correlation(sent[:len(sent) - shift] if shift else sent, heard[shift:])
        if value > best[1]:
            best = (shift * step_ms, value)
    return best


def onsets(levels, threshold, quiet_ms=150.0):
    """Epoch ms at which the level rises over `threshold` after at least
    `quiet_ms` under it: the starts of words."""
    found, last_loud = [], None
    for t, level, *_ in levels:
        if level >= threshold:
            if last_loud is None or t - last_loud >= quiet_ms:
                found.append(t)
            last_loud = t
    return found


def last_sound(levels, threshold, after):
    """The last epoch ms, after `after`, at which the level was over `threshold` (None if never)."""
    loud = [t for t, level, *_ in levels if t > after and level >= threshold]
    return loud[-1] if loud else None


def percentile(values, share):
    ordered = sorted(values)
    if not ordered:
        return None
    index = min(len(ordered) - 1, max(0, int(round(share * (len(ordered) - 1)))))
    return ordered[index]
