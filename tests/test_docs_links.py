"""Every markdown file's relative links, and every path it quotes that leaves its folder
(`../...`), point at a file inside the repository: the docs never send a reader outside it."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p for p in ROOT.rglob("*.md")
               if not {".git", ".venv", "node_modules", ".pytest_cache", ".hypothesis"} & set(p.parts))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_the_repository(page):
    text = page.read_text(encoding="utf-8")
    targets = [link for link in re.findall(r"\]\(([^)\s]+)\)", text)
               if not re.match(r"^[a-z]+:", link) and not link.startswith("#")]
    targets += re.findall(r"`(\.\./[^`\s]+)`", text)
    for target in targets:
        resolved = (page.parent / target.split("#")[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.relative_to(ROOT)} points outside the repository: {target}"
        assert resolved.exists(), f"{page.relative_to(ROOT)} points at a missing file: {target}"
