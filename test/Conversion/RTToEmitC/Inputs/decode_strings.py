"""Reads generated C++ on stdin and prints it with every reference into the
string table, `(const char *)parc_strings + N`, replaced by the string it
points to as a C literal (bytes outside printable ASCII, `"` and `\\` as
\\xNN), so lit tests can check names where they are used. The table itself
is printed as it is."""
import re
import sys


TABLE = re.compile(rb"parc_strings\[(\d+)\] = \{([-0-9, ]*)\};")
REF = re.compile(rb"\(const char \*\)parc_strings \+ (\d+)")


def table(match):
    """The bytes of one parc_strings table (NUL-terminated strings)."""
    data = bytes(int(v) & 0xFF for v in match.group(2).split(b","))
    assert len(data) == int(match.group(1)), "table size does not match"
    return data


def literal(data, offset):
    raw = data[offset:data.index(b"\0", offset)]
    return b'"' + b"".join(
        bytes([c]) if 0x20 <= c < 0x7F and c not in b'"\\' else b"\\x%02x" % c
        for c in raw) + b'"'


def decode(src):
    """Each module's references read the table that module declares (with
    --split-input-file, one table per module)."""
    tables = list(TABLE.finditer(src))
    out, last = [], 0
    for i, m in enumerate(tables):
        end = tables[i + 1].start() if i + 1 < len(tables) else len(src)
        data = table(m)
        out.append(src[last:m.end()])
        out.append(REF.sub(lambda r: literal(data, int(r.group(1))),
                           src[m.end():end]))
        last = end
    out.append(src[last:])
    return b"".join(out)


if __name__ == "__main__":
    sys.stdout.buffer.write(decode(sys.stdin.buffer.read()))
