"""Damage a weight shard: flip one bit of its data section.

flip SHARD: flips bit 0 of the first byte of the first tensor's data (in
data order), leaving the header (and its checksums) as written, and prints
that tensor's name.
"""
import json
import struct
import sys


def flip(path):
    data = bytearray(open(path, "rb").read())
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    tensors = sorted((v["data_offsets"][0], k) for k, v in header.items()
                     if k != "__metadata__")
    begin, name = tensors[0]
    data[8 + n + begin] ^= 1
    open(path, "wb").write(data)
    print(f"flipped a bit of tensor '{name}'")


if __name__ == "__main__":
    {"flip": flip}[sys.argv[1]](*sys.argv[2:])
