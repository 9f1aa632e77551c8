"""Fast PNG encoding of a matplotlib Agg canvas, for widgets that redraw on every change."""
from __future__ import annotations

import struct
import zlib

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def png_rgba(rgba: np.ndarray, level: int = 1) -> bytes:
    """Encode an (height, width, 4) uint8 array as PNG with no row filter and fast deflate.

    Pillow's encoder tries a filter per row, which costs more than the drawing itself for a
    figure with large flat areas; a plain deflate of the rows is 2-3x faster at the same size.
    """
    h, w, c = rgba.shape
    if c != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"expected an (h, w, 4) uint8 array, got shape {rgba.shape} of {rgba.dtype}")
    raw = np.zeros((h, w * 4 + 1), dtype=np.uint8)  # each row: filter type 0, then the pixels
    raw[:, 1:] = rgba.reshape(h, w * 4)
    return (b"\x89PNG\r\n\x1a\n"
            + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + _png_chunk(b"IDAT", zlib.compress(raw.tobytes(), level))
            + _png_chunk(b"IEND", b""))


def _png(canvas: FigureCanvasAgg) -> bytes:
    """PNG bytes of what the Agg canvas holds now (without drawing it again)."""
    return png_rgba(np.asarray(canvas.buffer_rgba()))
