"""Real media files for tests, made here: images of a given size and format (Pillow), PDFs
whose pages hold given texts (written by hand: a few objects and a cross-reference table),
WAV clips of a given duration."""

from __future__ import annotations

import base64
import functools
import io
import wave
from typing import Any

from PIL import Image

MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


@functools.cache
def image_bytes(width: int, height: int, fmt: str = "PNG") -> bytes:
    out = io.BytesIO()
    mode = "P" if fmt == "GIF" else "L" if fmt in ("PNG", "JPEG") else "RGB"
    Image.new(mode, (width, height)).save(out, fmt)
    return out.getvalue()


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def png(width: int, height: int) -> str:
    """Base64 of a `width` × `height` PNG."""
    return b64(image_bytes(width, height, "PNG"))


def anthropic_image(data: str, media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def openai_image(
    data: str, media_type: str = "image/png", detail: str | None = None
) -> dict[str, Any]:
    image: dict[str, Any] = {"url": f"data:{media_type};base64,{data}"}
    if detail is not None:
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


def pdf_bytes(pages: list[str], size: tuple[int, int] = (612, 792)) -> bytes:
    """A PDF with one page per text (Helvetica, one line each), `size` in points."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 10 Tf 36 {size[1] - 48} Td ({escaped}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {size[0]} {size[1]}] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def anthropic_pdf(data: str) -> dict[str, Any]:
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": data},
    }


def wav_bytes(seconds: float, rate: int = 8000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as clip:
        clip.setnchannels(1)
        clip.setsampwidth(2)
        clip.setframerate(rate)
        clip.writeframes(b"\0\0" * int(seconds * rate))
    return out.getvalue()
