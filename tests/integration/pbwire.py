"""Protobuf's wire format by hand, for the tests that call a service
directly (there is no grpc_tools here): varints, a field, and a message
read back as its fields."""


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def read_varint(data, i):
    """The varint at data[i]: (value, the index after it)."""
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def field(num, value):
    """One field: an int as a varint, str or bytes length-delimited."""
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    raw = value.encode() if isinstance(value, str) else value
    return varint(num << 3 | 2) + varint(len(raw)) + raw


def fields(data):
    """A message's fields as (number, value) pairs in order: varints as
    ints, length-delimited values as bytes."""
    out, i = [], 0
    while i < len(data):
        key, i = read_varint(data, i)
        if key & 7 == 0:
            val, i = read_varint(data, i)
        elif key & 7 == 2:
            n, i = read_varint(data, i)
            val, i = data[i:i + n], i + n
        else:
            raise ValueError("unexpected wire type %d" % (key & 7))
        out.append((key >> 3, val))
    return out
