"""Just enough PNG decoding to check a screenshot: 8-bit RGB/RGBA, not interlaced.

Chrome's screenshots are exactly that, and the standard library has zlib, so the
test needs no imaging package.
"""

import struct
import zlib


def decode(data):
    """Returns (width, height, channels, rows) with rows a list of bytearrays."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    offset = 8
    width = height = None
    channels = None
    idat = bytearray()
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind = data[offset + 4:offset + 8]
        body = data[offset + 8:offset + 8 + length]
        offset += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace != 0 or color not in (2, 6):
                raise ValueError(f"unsupported PNG: depth {depth}, color type {color}, interlace {interlace}")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    rows = []
    previous = bytearray(stride)
    position = 0
    for _ in range(height):
        kind = raw[position]
        line = bytearray(raw[position + 1:position + 1 + stride])
        position += 1 + stride
        if kind == 1:  # Sub
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:  # Up
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + predictor) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def region_stats(png_bytes, left, top, width, height, step=4):
    """Mean and variance of the luma of a rectangle (sampled every `step` pixels),
    and how many distinct coarse colours it holds."""
    image_width, image_height, channels, rows = decode(png_bytes)
    left, top = max(0, int(left)), max(0, int(top))
    right = min(image_width, int(left + width))
    bottom = min(image_height, int(top + height))
    values = []
    colours = set()
    for y in range(top, bottom, step):
        row = rows[y]
        for x in range(left, right, step):
            r, g, b = row[x * channels], row[x * channels + 1], row[x * channels + 2]
            values.append(0.299 * r + 0.587 * g + 0.114 * b)
            colours.add((r >> 5, g >> 5, b >> 5))
    if not values:
        return 0.0, 0.0, 0
    mean = sum(values) / len(values)
    variance = sum((v - mean) ** 2 for v in values) / len(values)
    return mean, variance, len(colours)
