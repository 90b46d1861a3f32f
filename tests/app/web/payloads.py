"""What the web tests send: a secret that must never show, and PNGs of a given size."""

import base64
import io

from PIL import Image

LEAK = "sk-live-0123456789abcdef"


def png(width, height) -> str:
    out = io.BytesIO()
    Image.new("L", (width, height)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()
