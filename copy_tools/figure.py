"""Pictures without a plotting dependency: a figure is a list of rectangles, lines and texts
(coordinates in pixels, y down), written as SVG by hand or, when matplotlib is importable, as
PNG from the same list. `copy-layout` and the benchmarks' `--plot` draw with it."""

from __future__ import annotations

import importlib.util
import io
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr


class FigureError(Exception):
    """A figure that cannot be written (a PNG without matplotlib, an unknown suffix)."""


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    kind: str = ""
    """The SVG class (`chunk`, `bar`, ...): what a reader or a test selects by."""
    tip: str = ""
    """A tooltip (SVG `<title>`)."""
    stroke: str = "#ffffff"


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = "#000000"
    dashed: bool = False
    kind: str = ""


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    size: float = 11
    anchor: str = "start"
    """start, middle or end (SVG's text-anchor)."""
    fill: str = "#000000"
    bold: bool = False


@dataclass
class Figure:
    width: float
    height: float
    items: list[Rect | Line | Text] = field(default_factory=list)

    def add(self, *items: Rect | Line | Text) -> None:
        self.items.extend(items)

    def fit(self) -> None:
        """Widens the figure to its texts (about 0.6 em per character) and rects."""
        for item in self.items:
            if isinstance(item, Text) and item.anchor == "start":
                em = 0.68 if item.bold else 0.6
                self.width = max(self.width, item.x + em * item.size * len(item.text) + 12)
            elif isinstance(item, Rect):
                self.width = max(self.width, item.x + item.w + 12)
                self.height = max(self.height, item.y + item.h + 12)

    def svg(self) -> str:
        """The figure as a standalone SVG document."""
        self.fit()
        out = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:g}" '
            f'height="{self.height:g}" viewBox="0 0 {self.width:g} {self.height:g}" '
            'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
            f'<rect class="background" x="0" y="0" width="{self.width:g}" '
            f'height="{self.height:g}" fill="#ffffff"/>',
        ]
        out += [_svg_item(item) for item in self.items]
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def write(self, path: str | Path) -> None:
        """Writes `path`: SVG for `.svg`, PNG (matplotlib) for `.png`; through a temporary
        file and a rename (`opt_output.write_file_atomically`), so that a reader never sees
        a half-written picture, even while another run writes the same path."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".svg":
            data = self.svg().encode()
        elif suffix == ".png":
            data = self._png(path)
        else:
            raise FigureError(f"expected a picture path ending in .svg or .png, got {str(path)!r}")
        from copy_tools.opt_errors import ToolError
        from copy_tools.opt_output import write_file_atomically

        try:
            write_file_atomically(str(path), data)
        except ToolError as exc:
            raise FigureError(str(exc)) from None

    def _png(self, path: Path) -> bytes:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from matplotlib.patches import Rectangle
        except ImportError:
            raise FigureError(
                f"writing {str(path)!r} needs matplotlib, which is not installed: write an "
                ".svg instead (no dependency), or pip install matplotlib"
            ) from None
        self.fit()
        dpi = 100
        fig = plt.figure(figsize=(self.width / dpi, self.height / dpi), dpi=dpi)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        ax.axis("off")
        for item in self.items:
            if isinstance(item, Rect):
                ax.add_patch(
                    Rectangle(
                        (item.x, item.y), item.w, item.h, facecolor=item.fill,
                        edgecolor=item.stroke, linewidth=0.5,
                    )
                )  # fmt: skip
            elif isinstance(item, Line):
                ax.plot(
                    [item.x1, item.x2], [item.y1, item.y2], color=item.stroke,
                    linestyle="--" if item.dashed else "-", linewidth=1,
                )  # fmt: skip
            else:
                ax.text(
                    item.x, item.y, item.text, fontsize=item.size * 0.75, color=item.fill,
                    ha={"start": "left", "middle": "center", "end": "right"}[item.anchor],
                    va="baseline", fontweight="bold" if item.bold else "normal",
                )  # fmt: skip
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=dpi)
        plt.close(fig)
        return png.getvalue()


def check_picture(path: str | Path, suffix: str | None = None) -> None:
    """Raises FigureError when `path` cannot be written as a picture: a suffix other than
    `suffix` (or than .svg and .png), or a PNG without matplotlib. Checked before the work
    that the picture shows is done."""
    found = Path(path).suffix.lower()
    allowed = (suffix,) if suffix else (".svg", ".png")
    if found not in allowed:
        raise FigureError(
            f"expected a picture path ending in {' or '.join(allowed)}, got {str(path)!r}"
        )
    if found == ".png" and importlib.util.find_spec("matplotlib") is None:
        raise FigureError(
            f"writing {str(path)!r} needs matplotlib, which is not installed: write an "
            ".svg instead (no dependency), or pip install matplotlib"
        )


def _svg_item(item: Rect | Line | Text) -> str:
    if isinstance(item, Rect):
        cls = f" class={quoteattr(item.kind)}" if item.kind else ""
        body = f"<title>{escape(item.tip)}</title>" if item.tip else ""
        attrs = (
            f'x="{item.x:g}" y="{item.y:g}" width="{item.w:g}" height="{item.h:g}" '
            f'fill="{item.fill}" stroke="{item.stroke}" stroke-width="0.5"'
        )
        return f"<rect{cls} {attrs}>{body}</rect>" if body else f"<rect{cls} {attrs}/>"
    if isinstance(item, Line):
        cls = f" class={quoteattr(item.kind)}" if item.kind else ""
        dash = ' stroke-dasharray="6 4"' if item.dashed else ""
        return (
            f'<line{cls} x1="{item.x1:g}" y1="{item.y1:g}" x2="{item.x2:g}" y2="{item.y2:g}" '
            f'stroke="{item.stroke}" stroke-width="1.5"{dash}/>'
        )
    weight = ' font-weight="bold"' if item.bold else ""
    return (
        f'<text x="{item.x:g}" y="{item.y:g}" font-size="{item.size:g}" '
        f'text-anchor="{item.anchor}" fill="{item.fill}"{weight}>{escape(item.text)}</text>'
    )


def palette(i: int, n: int) -> str:
    """The colour of item `i` of `n`: hues spread around the wheel, light enough for black text
    (HSL with lightness 72%)."""
    hue = (i * 360 / max(n, 1)) % 360
    return _hsl(hue, 0.65, 0.72)


def _hsl(h: float, s: float, lightness: float) -> str:
    c = (1 - abs(2 * lightness - 1)) * s
    x = c * (1 - abs((h / 60) % 2 - 1))
    m = lightness - c / 2
    r, g, b = [
        (c, x, 0),
        (x, c, 0),
        (0, c, x),
        (0, x, c),
        (x, 0, c),
        (c, 0, x),
    ][int(h // 60) % 6]
    return "#" + "".join(f"{round((v + m) * 255):02x}" for v in (r, g, b))
