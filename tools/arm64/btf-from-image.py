#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Carve a kernel's BTF out of its boot image (an uncompressed arm64 Image,
or a gzip'ed one): the .BTF section is there as it is in vmlinux, a header
(magic 0xeB9F, version 1, header length 24) then the types and strings it
gives the lengths of. The first blob whose header is sane and whose string
section starts and ends with NUL is taken.

    btf-from-image.py IMAGE OUT
"""
import gzip
import struct
import sys


def main():
    img, out = sys.argv[1], sys.argv[2]
    data = open(img, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    pos = 0
    while True:
        pos = data.find(b"\x9f\xeb\x01", pos)
        if pos < 0:
            sys.exit(f"{img}: no BTF found")
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<5I", data, pos + 4)
        end = pos + hdr_len + max(type_off + type_len, str_off + str_len)
        s0 = pos + hdr_len + str_off
        if (hdr_len == 24 and type_off == 0 and str_off == type_len and type_len > 1 << 20
                and str_len > 1 << 20 and end <= len(data)
                and data[s0] == 0 and data[s0 + str_len - 1] == 0):
            open(out, "wb").write(data[pos:end])
            print(f"{img}: BTF at {pos:#x}, {end - pos} bytes")
            return
        pos += 1


main()
