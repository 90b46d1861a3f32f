"""Photos made in the test: plain images and QR labels (no files from elsewhere)."""

from __future__ import annotations

import io

import zxingcpp
from PIL import Image, ImageDraw


def jpeg(size=(64, 48), color=(180, 40, 40)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "JPEG")
    return buf.getvalue()


def photo_with_qr(text: str) -> bytes:
    """A grey 'bench' with a QR label stuck on it, as a JPEG."""
    code = memoryview(zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.QRCode).to_image(
        scale=5))
    h, w = code.shape
    label = Image.frombytes("L", (w, h), code.tobytes()).convert("RGB")
    scene = Image.new("RGB", (w * 3, h * 2), (120, 120, 110))
    ImageDraw.Draw(scene).rectangle((10, 10, w * 2, h + 30), fill=(60, 70, 90))
    scene.paste(label, (w + 20, h // 2))
    buf = io.BytesIO()
    scene.save(buf, "JPEG", quality=92)
    return buf.getvalue()
