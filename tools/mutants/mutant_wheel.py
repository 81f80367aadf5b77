"""A mutant wheel: the original wheel with one file edited and its RECORD line fixed.

The result has the original's file name (pip and check-my-wheel read the version from it), the
original's entries in the original order, and is byte-for-byte reproducible: unchanged entries
are copied as stored (compressed bytes, headers, timestamps), the edited file and RECORD are
deflated deterministically, so the same mutant always gives the same sha256 (the venv key of
./bazelw) and copying 100 MB of TVM takes a second, not a recompression.
Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import zipfile
import zlib

_LOCAL = struct.Struct("<4s5H3I2H")  # local file header, 30 bytes
_CENTRAL = struct.Struct("<4s6H3I5H2I")  # central directory header, 46 bytes
_END = struct.Struct("<4s4H2IH")  # end of central directory, 22 bytes
_LOCAL_SIG, _CENTRAL_SIG, _END_SIG = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"
_DESCRIPTOR_SIG = b"PK\x07\x08"
_DATA_DESCRIPTOR_FLAG = 0x08


class WheelError(ValueError):
    """The wheel cannot be mutated (missing file, no RECORD, a layout this writer refuses)."""


def record_hash(data: bytes) -> str:
    """The RECORD hash field of `data` (PEP 376/427: sha256, urlsafe base64, no padding)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def fixed_record(record: str, path: str, data: bytes) -> str:
    """RECORD text with `path`'s line giving `data`'s hash and size; WheelError if absent."""
    lines = record.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.split(",", 1)[0] == path:
            ending = "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""
            lines[index] = f"{path},{record_hash(data)},{len(data)}{ending}"
            return "".join(lines)
    raise WheelError(f"RECORD has no line for {path}")


def _deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def write_mutant(source: str, dest: str, path: str, edit: callable) -> str:
    """Write `dest`: `source` with entry `path` replaced by edit(old text), RECORD fixed.

    Returns the sha256 of `dest`. `edit` maps the file's text to the mutated text (it raises
    when the mutant does not apply).
    """
    with zipfile.ZipFile(source) as archive:
        infos = archive.infolist()
        names = [info.filename for info in infos]
        if path not in names:
            raise WheelError(f"{os.path.basename(source)} has no {path}")
        records = [n for n in names if n.endswith(".dist-info/RECORD") and n.count("/") == 1]
        if len(records) != 1:
            raise WheelError(f"{os.path.basename(source)}: expected one RECORD, found {records}")
        new_text = edit(archive.read(path).decode("utf-8"))
        new_data = new_text.encode("utf-8")
        record_name = records[0]
        record = fixed_record(archive.read(record_name).decode("utf-8"), path, new_data)
        replaced = {path: new_data, record_name: record.encode("utf-8")}
    with open(source, "rb") as stream:
        blob = stream.read()
    end = blob.rfind(_END_SIG)
    (_, _, _, _, count, cd_size, cd_offset, _) = _END.unpack_from(blob, end)
    if count == 0xFFFF or cd_offset == 0xFFFFFFFF or count != len(infos):
        raise WheelError(f"{os.path.basename(source)}: zip64 archives are not supported")
    out = bytearray()
    central = bytearray()
    position = cd_offset
    for info in infos:
        header = list(_CENTRAL.unpack_from(blob, position))
        name_len, extra_len, comment_len = header[10], header[11], header[12]
        name = blob[position + 46 : position + 46 + name_len].decode("utf-8")
        tail = blob[position + 46 : position + 46 + name_len + extra_len + comment_len]
        position += 46 + name_len + extra_len + comment_len
        if name != info.filename:
            raise WheelError(f"central directory out of order at {name}")
        local_offset = header[16]
        local = list(_LOCAL.unpack_from(blob, local_offset))
        start = local_offset + 30 + local[9] + local[10]
        header[16] = len(out)  # where this entry's local header now starts
        if name in replaced:
            data = replaced[name]
            packed = _deflate(data)
            crc = zlib.crc32(data) & 0xFFFFFFFF
            flags = local[2] & ~_DATA_DESCRIPTOR_FLAG
            local[2], local[3], local[6], local[7], local[8] = flags, 8, crc, len(packed), len(data)
            header[3], header[4], header[7], header[8], header[9] = (
                flags,
                8,
                crc,
                len(packed),
                len(data),
            )
            out += _LOCAL.pack(*local) + blob[local_offset + 30 : start] + packed
        else:
            size = info.compress_size
            stop = start + size
            if local[2] & _DATA_DESCRIPTOR_FLAG:
                stop += 16 if blob[stop : stop + 4] == _DESCRIPTOR_SIG else 12
            out += blob[local_offset:stop]
        central += _CENTRAL.pack(*header) + tail
    new_cd_offset = len(out)
    out += central
    out += _END.pack(_END_SIG, 0, 0, len(infos), len(infos), len(central), new_cd_offset, 0)
    os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
    with open(dest, "wb") as stream:
        stream.write(out)
    return hashlib.sha256(bytes(out)).hexdigest()
