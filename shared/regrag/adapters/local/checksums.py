"""CRC-32 checksums of what the local stores keep (index rows, vector-cache entries, saved snapshot files), so that
damaged bytes are found and rebuilt instead of trusted.

SQLite's own integrity check covers its b-trees, not the bytes of a value: a flipped byte inside a stored
vector or a chunk's JSON passes it and changes answers (or fails a query with a 500). A CRC is made for exactly
this, detecting accidental damage (every burst of up to 32 flipped bits, and all but one in 4 billion others);
nobody tampers with a local data folder through its bytes, so a cryptographic hash would buy nothing but time.
zlib's CRC-32 is in the standard library and reads 2.4 GB/s here (SHA-256: 0.8 GB/s; bench/README.md,
"Checksums", has what it costs a snapshot load).
"""

from __future__ import annotations

import zlib
from pathlib import Path

_READ_BYTES = 8 * 1024 * 1024


def of(*parts: bytes | str) -> int:
    """The CRC-32 of the parts, concatenated (text as UTF-8)."""
    crc = 0
    for part in parts:
        crc = zlib.crc32(part.encode("utf-8") if isinstance(part, str) else part, crc)
    return crc


def of_file(path: Path) -> int:
    """The CRC-32 of a file's bytes, read in 8 MB pieces."""
    crc = 0
    with path.open("rb") as fh:
        while block := fh.read(_READ_BYTES):
            crc = zlib.crc32(block, crc)
    return crc
