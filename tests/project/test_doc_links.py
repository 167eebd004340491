"""Every link and path a document of the repository names exists in the repository, and no
document, docstring or comment names a file outside it.

- links: each `[text](target)` of a tracked `.md` file (README.md included) that is not a URL
  or an anchor: `target` (its `#fragment` dropped) is a file or folder of the repository,
  relative to the document's folder;
  a `#fragment` into a markdown file names one of its headings (GitHub's anchors);
- paths: each `code span` of a `.md` file that looks like a repository path (a folder of the
  repository, then `/`, then a name with no spaces): it exists, read from the repository's
  root or from the document's folder (a glob such as `tests/*_gpu.py` matches something);
- outside files: no `.md`, `.py`, `.toml` or `.mlir` file names a note that lies outside
  the repository (a folder beside it, or the notes' own names: `OUTSIDE`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
PLAIN = re.compile(r"(?<![\w./-])([\w-]+/[\w./-]*\.(?:py|md|toml|mlir|sh|json|cfg))\b")
OUTSIDE = re.compile(
    r"\.\./shared|/work/shared|toolchain\.md|h200-findings|tma-rules|constraints\.md"
    r"|tma-reduce-table|tma-store-overrun|\bDESIGN\.md"
)


def tracked(*suffixes: str) -> list[Path]:
    """The repository's files with these suffixes: tracked or new, not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return sorted(ROOT / p for p in listed if p.endswith(suffixes) and (ROOT / p).is_file())


DOCS = tracked(".md")
TOP_FOLDERS = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith("."))


def links(text: str) -> list[str]:
    return [t for t in LINK.findall(FENCE.sub("", text)) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def paths(text: str) -> list[str]:
    """Code spans that name a path of the repository (`folder/...` for a top-level folder),
    and such paths in the prose that end in a file name (`docs/design.md`)."""
    found = []
    prose = CODE.sub(" ", LINK.sub(" ", FENCE.sub("", text)))
    for match in PLAIN.finditer(prose):
        if match.group(1).split("/", 1)[0] in TOP_FOLDERS:
            found.append(match.group(1))
    for span in CODE.findall(FENCE.sub("", text)):
        span = span.strip().rstrip(".,:;")
        head = span.split("/", 1)[0]
        if "/" in span and head in TOP_FOLDERS and re.fullmatch(r"[\w./*+-]+", span):
            found.append(span.split(":", 1)[0])
    return found


def exists(target: str, base: Path) -> bool:
    for start in (base, ROOT):
        candidate = (start / target).resolve()
        if not candidate.is_relative_to(ROOT):
            continue
        if "*" in target:
            if list(start.glob(target)):
                return True
        elif candidate.exists():
            return True
    return False


def anchors(doc: Path) -> set[str]:
    """GitHub's anchors of the headings of `doc` (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", doc.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if not count else f"{slug}-{count}")
    return found


def broken_anchor(target: str, doc: Path) -> bool:
    path, _, fragment = target.partition("#")
    if not fragment:
        return False
    file = (doc.parent / path).resolve() if path else doc
    return file.suffix == ".md" and file.is_file() and fragment not in anchors(file)


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_every_link_and_path_exists(doc: Path):
    text = doc.read_text(encoding="utf-8")
    missing = [f"link {t}" for t in links(text) if not exists(t.split("#", 1)[0], doc.parent)]
    missing += [f"path {p}" for p in paths(text) if not exists(p, doc.parent)]
    missing += [f"anchor {t}" for t in links(text) if broken_anchor(t, doc)]
    assert not missing, f"{doc.relative_to(ROOT)} names what the repository lacks: {missing}"


def test_nothing_names_a_file_outside_the_repository():
    found = []
    for path in tracked(".md", ".py", ".toml", ".mlir", ".sh"):
        if path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert not found, "\n".join(found)


def test_the_checker_sees_links_and_paths():
    text = "See [a](docs/design.md#x), [b](https://x.org), `copy_dialect/rules.toml`, `x/y`.\n"
    text += "```\n[c](not/checked.md)\n```\n"
    assert links(text) == ["docs/design.md#x"]
    assert "the-map-each-folder-what-it-owns-what-it-may-import" in anchors(
        ROOT / "docs" / "design.md"
    )
    assert paths(text) == ["copy_dialect/rules.toml"]
    assert paths("as docs/hardware.md says, and x/y.md") == ["docs/hardware.md"]
    assert not exists("../outside.md", ROOT)
    assert OUTSIDE.search("as tma-rules.md says")
