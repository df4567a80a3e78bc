"""Figures written into docs/benchmarks.md by the harnesses that measure:
each run's block, between `<!-- NAME -->` and `<!-- /NAME -->`, in its section
(a `## ` heading), replacing that block's earlier figures and keeping
everything else: the other blocks and the text around them (record_blocks);
or a whole section of a run's own, in place of its earlier one
(record_section)."""
import re
from pathlib import Path


def record_blocks(path, heading, intro, blocks):
    """`blocks`: (marker, text) pairs, each text starting with `<!-- marker -->`
    and ending with `<!-- /marker -->`. A missing section is made with `intro`
    under `heading`; a missing file, with a title."""
    path = Path(path)
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    match = re.search(r"^" + re.escape(heading) + r"\n.*?(?=^## |\Z)", text, flags=re.S | re.M)
    section = (text[match.start():match.end()].rstrip("\n") + "\n") if match else f"{heading}\n\n{intro}\n"
    for marker, block in blocks:
        name = re.escape(marker)
        pattern = re.compile(rf"<!-- {name} -->\n.*?<!-- /{name} -->", re.S)
        if pattern.search(section):
            section = pattern.sub(lambda _: block, section)
        else:
            section = section.rstrip("\n") + "\n\n" + block + "\n"
    section = section.rstrip("\n") + "\n"
    if match:
        rest = text[match.end():]
        text = text[:match.start()] + section + ("\n" + rest if rest else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def record_section(path, section):
    """`section` (its first line its `## ` heading) in place of the section of
    that heading, or after everything else when there is none yet."""
    path = Path(path)
    heading = section.split("\n", 1)[0]
    text = path.read_text() if path.exists() else "# Benchmarks\n\n"
    match = re.search(r"^" + re.escape(heading) + r"\n.*?(?=^## |\Z)", text, flags=re.S | re.M)
    if match:
        text = text[:match.start()] + section + ("\n" if match.end() < len(text) else "") + text[match.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)
