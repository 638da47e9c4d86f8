# SPDX-License-Identifier: MIT
"""The base-128 varint of protobuf and of Go's execution trace: seven bits a
byte, least significant first, the top bit set on every byte but the last.
One encoder for tools/trace/profile2pprof.py and tools/trace/trace2go.py, which differ
only on negative numbers:

- protobuf (profile.proto's int64 fields) wraps a negative to its 64-bit
  two's complement, ten bytes (wrap_negative=True);
- Go's trace format has no negative numbers: one there is a bug upstream
  (an out-of-order timestamp once gave a delta whose varint never ended),
  so it is refused.

>>> varint(0), varint(1), varint(127), varint(128), varint(300)
(b'\\x00', b'\\x01', b'\\x7f', b'\\x80\\x01', b'\\xac\\x02')
>>> varint(-1, wrap_negative=True) == b'\\xff' * 9 + b'\\x01'
True
>>> varint(-1)
Traceback (most recent call last):
...
ValueError: varint of -1: the wire format has no negative numbers

Run the examples: python3 -m doctest tools/trace/varint.py (make check-tools).
"""


def varint(n, wrap_negative=False):
    if n < 0:
        if not wrap_negative:
            raise ValueError(f"varint of {n}: the wire format has no negative numbers")
        n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
