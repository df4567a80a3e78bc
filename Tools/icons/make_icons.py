"""Cowatch's app icons (static/icons/), drawn like the favicon in index.html and
room.html: a blue (#2255cc) rounded square with a white play triangle, on the
favicon's 16-unit grid (square rx 3; triangle 6,4 12,8 6,12). The PNGs are
8-bit RGBA, anti-aliased by 4 x 4 samples a pixel; the maskable one fills its
whole square (the platform cuts its own shape) and keeps the triangle within the
safe zone (the middle circle of 40 % radius). Standard library only.

Run: python3 Tools/icons/make_icons.py Sources/CowatchWeb/Web/static/icons
"""
import struct
import sys
import zlib
from pathlib import Path

BLUE = (0x22, 0x55, 0xCC)
WHITE = (0xFF, 0xFF, 0xFF)
SAMPLES = 4
TRIANGLE = ((6, 4), (12, 8), (6, 12))


def inside_rounded(x, y, radius):
    """(x, y) in the 16 x 16 square with corners of `radius` (0: square)."""
    if not (0 <= x <= 16 and 0 <= y <= 16):
        return False
    cx = min(max(x, radius), 16 - radius)
    cy = min(max(y, radius), 16 - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2


def inside_triangle(x, y, scale):
    """(x, y) in the play triangle, scaled by `scale` about its centre (8, 8)."""
    (ax, ay), (bx, by), (cx, cy) = [(8 + (px - 8) * scale, 8 + (py - 8) * scale) for px, py in TRIANGLE]

    def side(x1, y1, x2, y2):
        return (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)
    d1, d2, d3 = side(ax, ay, bx, by), side(bx, by, cx, cy), side(cx, cy, ax, ay)
    return (d1 >= 0 and d2 >= 0 and d3 >= 0) or (d1 <= 0 and d2 <= 0 and d3 <= 0)


def draw(size, maskable):
    radius = 0 if maskable else 3
    scale = 1.0
    rows = []
    for j in range(size):
        row = bytearray([0])  # filter: none
        for i in range(size):
            cover = white = 0
            for sj in range(SAMPLES):
                for si in range(SAMPLES):
                    x = (i + (si + 0.5) / SAMPLES) * 16 / size
                    y = (j + (sj + 0.5) / SAMPLES) * 16 / size
                    if inside_rounded(x, y, radius):
                        cover += 1
                        if inside_triangle(x, y, scale):
                            white += 1
            if cover == 0:
                row += bytes(4)
                continue
            t = white / cover
            rgb = [round(b + (w - b) * t) for b, w in zip(BLUE, WHITE)]
            row += bytes(rgb + [round(255 * cover / SAMPLES ** 2)])
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(width, height, raw):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="512" height="512">
  <title>Cowatch</title>
  <rect width="16" height="16" rx="3" fill="#2255cc"/>
  <path d="M6 4l6 4-6 4z" fill="#ffffff"/>
</svg>
"""


def main(folder):
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    (out / "icon.svg").write_text(SVG)
    (out / "icon-192.png").write_bytes(draw(192, False))
    (out / "icon-512.png").write_bytes(draw(512, False))
    (out / "icon-maskable-512.png").write_bytes(draw(512, True))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
