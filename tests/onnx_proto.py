"""Protobuf wire encoding for the ONNX files the Python scripts write (tests/onnx_export.py,
bench/mobilenet_v3_onnx.py): no packages needed."""


def varint(v):
    """v as a base-128 varint (negative numbers as their 64-bit two's complement)."""
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    """Field num of wire type wire (0 varint, 2 length-delimited, 5 32-bit) with its payload."""
    return varint(num << 3 | wire) + payload
