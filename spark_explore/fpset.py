"""One partition's share of the visited set: a sorted array of 128-bit fingerprints.

Each Spark partition keeps the fingerprints of the states it owns (`owner_of` of their keys,
`level.py`) as one
`FingerprintSet`, a single record of the visited RDD. The set is two parallel `array('Q')` of the
high and low 64 bits of each fingerprint, sorted by (high, low): 16 bytes per state and nothing
else, so the visited set costs 16 bytes per state in the block manager, and pickling it (which
PySpark does each time a cached partition is read) is a memory copy rather than the rebuilding of
millions of Python objects a `set` of bytes would need. This is TLC's DiskFPSet idea (a sorted
run of fingerprints merged periodically) at partition scale.

Per level a partition does `contains` for each candidate that reached it (a binary search in C
over the high words, `bisect` on an array) and one `merged` with the new fingerprints, which
copies the old arrays in slices between insertion points: O(new * log(visited)) Python steps plus
one O(visited) memory copy. No numpy: the package's only runtime dependency for Spark is PySpark.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable


def split(fp: bytes) -> tuple[int, int]:
    """A 16-byte fingerprint as its (high, low) unsigned 64-bit halves, big-endian."""
    return int.from_bytes(fp[:8], "big"), int.from_bytes(fp[8:16], "big")


class FingerprintSet:
    """A sorted, immutable set of 128-bit fingerprints; `merged` returns a new set."""

    __slots__ = ("hi", "lo")

    def __init__(self, hi: array | None = None, lo: array | None = None) -> None:
        self.hi = hi if hi is not None else array("Q")
        self.lo = lo if lo is not None else array("Q")

    @classmethod
    def of(cls, fps: Iterable[bytes]) -> FingerprintSet:
        return cls().merged(fps)

    def __reduce__(self):
        return (FingerprintSet, (self.hi, self.lo))

    def __len__(self) -> int:
        return len(self.hi)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays: 16 per fingerprint."""
        return (len(self.hi) + len(self.lo)) * self.hi.itemsize

    def _position(self, h: int, lo: int) -> tuple[int, bool]:
        """Where (h, lo) is or would go, and whether it is there."""
        hi_arr, lo_arr = self.hi, self.lo
        i = bisect_left(hi_arr, h)
        n = len(hi_arr)
        # Equal high words are as rare as 64-bit collisions; step over them by the low word.
        while i < n and hi_arr[i] == h and lo_arr[i] < lo:
            i += 1
        return i, i < n and hi_arr[i] == h and lo_arr[i] == lo

    def __contains__(self, fp: bytes) -> bool:
        return self._position(*split(fp))[1]

    def contains_split(self, h: int, lo: int) -> bool:
        """Whether the fingerprint with halves (h, lo) is in the set (`split` already done)."""
        return self._position(h, lo)[1]

    def merged(self, fps: Iterable[bytes]) -> FingerprintSet:
        """This set plus `fps` (duplicates and members ignored), as a new set."""
        new = sorted(set(map(split, fps)))
        if not new:
            return self
        hi_out, lo_out = array("Q"), array("Q")
        start = 0
        for h, lo in new:
            i, present = self._position(h, lo)
            if present:
                continue
            hi_out.extend(self.hi[start:i])
            lo_out.extend(self.lo[start:i])
            hi_out.append(h)
            lo_out.append(lo)
            start = i
        hi_out.extend(self.hi[start:])
        lo_out.extend(self.lo[start:])
        return FingerprintSet(hi_out, lo_out)

    def __iter__(self):
        for h, lo in zip(self.hi, self.lo):
            yield h.to_bytes(8, "big") + lo.to_bytes(8, "big")
