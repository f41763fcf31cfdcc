"""The documentation site as a reader sees it: built with ``mkdocs build --strict``, served on localhost and rendered
in a real headless browser (Chromium, driven by Playwright): every formula typeset by the bundled KaTeX, every
figure loaded and a link to itself at full size, its smallest text (recorded in the PNG by ``save_figure``) at
least ``MIN_TEXT_PX`` high as the page shows it on a 1280 px wide screen, no table cell that breaks a word across
lines, no table wider than what the page shows of it without a scroll bar or a shaded edge to say so, no request
that fails (a script, a font, a picture), and no link (a page, an anchor, a data file) that leads nowhere.

The browser is Chromium from the system (Debian's ``chromium``): ``BANDIT_GYM_BROWSER`` names its executable, else
it is looked up on the PATH; without one these tests are skipped, unless ``BANDIT_GYM_REQUIRE_BROWSER=1`` (set by
``.ci/run``, which installs it), when they fail."""

from __future__ import annotations

import functools
import http.server
import os
import posixpath
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from PIL import Image

from bandit_gym._canvas import SMALLEST_TEXT_KEY

ROOT = Path(__file__).resolve().parents[1]
#: the smallest text a figure may show, in CSS pixels, on a 1280 px wide screen (its PNG's smallest text, scaled
#: as the page draws the picture)
MIN_TEXT_PX = 10.0
#: Chromium's flags for a closed network (no background connections, no first-run work)
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
#: a word of a table cell: letters, digits and underscores (a line may break at a space, "-" or "/", not inside)
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("article table td, article table th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const word = /[A-Za-z0-9_]{2,}/g;
      let found;
      while ((found = word.exec(node.data))) {
        const range = document.createRange();
        range.setStart(node, found.index);
        range.setEnd(node, found.index + found[0].length);
        const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0)
                                  .map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(found[0]);
      }
    }
  }
  return broken;
}"""
MATH = """() => Array.from(document.querySelectorAll("article .arithmatex")).map(element => ({
  typeset: element.querySelector(".katex") !== null,
  raw: element.textContent.includes("\\\\[") || element.textContent.includes("\\\\(")
           ? element.textContent.slice(0, 60) : null,
}))"""
FIGURES = """() => Array.from(document.querySelectorAll("article img")).map(image => ({
  src: image.getAttribute("src"),
  loaded: image.complete && image.naturalWidth > 0,
  shown: image.getBoundingClientRect().width,
  natural: image.naturalWidth,
  column: image.closest("article").getBoundingClientRect().width,
  link: image.parentElement.tagName === "A" ? image.parentElement.getAttribute("href") : null,
}))"""


#: each article table, with its box against the article's column, and its scroll container (the table or a wrapper
#: in the article with more content than it shows): whether it shows a scroll bar (the space one takes) or shades
#: the edge where there is more (a gradient background, extra.css)
TABLES = """() => Array.from(document.querySelectorAll("article table")).map(table => {
  const article = table.closest("article");
  const column = article.getBoundingClientRect();
  const drawn = table.getBoundingClientRect();
  let scroller = table;
  while (scroller && scroller !== article && !(["auto", "scroll"].includes(getComputedStyle(scroller).overflowX)
                                               && scroller.scrollWidth > scroller.clientWidth + 1)) {
    scroller = scroller.parentElement;
  }
  scroller = scroller === article ? null : scroller;
  const style = scroller ? getComputedStyle(scroller) : null;
  return {
    head: Array.from(table.querySelectorAll("th")).map(th => th.textContent.trim()).join(" | ").slice(0, 60),
    width: drawn.width, column: column.width, beyond: Math.max(drawn.right - column.right, column.left - drawn.left),
    scrolls: scroller !== null, hidden: scroller ? scroller.scrollWidth - scroller.clientWidth : 0,
    bar: scroller ? scroller.offsetHeight - scroller.clientHeight - parseFloat(style.borderTopWidth)
                    - parseFloat(style.borderBottomWidth) > 0 : false,
    shaded: scroller ? style.backgroundImage.includes("gradient") : false,
  };
})"""


def _browser() -> str | None:
    named = os.environ.get("BANDIT_GYM_BROWSER")
    if named:
        return named
    for candidate in ("/usr/lib/chromium/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def _need(what: str) -> None:
    if os.environ.get("BANDIT_GYM_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{what} (BANDIT_GYM_REQUIRE_BROWSER=1)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("mkdocs") is None:
        _need("mkdocs is not installed (the docs extra)")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(["mkdocs", "build", "--strict", "--quiet", "-d", str(out)], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _browser()
    if executable is None:
        _need("no Chromium found (BANDIT_GYM_BROWSER, or chromium on the PATH)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("playwright is not installed (the docs extra)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=FLAGS)
        yield launched
        launched.close()


def _pages(site: Path) -> list[str]:
    return sorted(path.relative_to(site).as_posix() for path in site.rglob("*.html") if path.name != "404.html")


#: pages whose rendering is checked in the browser: every page but the API reference's (docstrings, no figures,
#: tables or formulas; their links are checked below with every page's)
def _read_pages(site: Path) -> list[str]:
    return [page for page in _pages(site) if not page.startswith("api/")]


def test_every_page_renders_its_math_figures_and_tables(site: Path, served: str, browser: object) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page.set_default_timeout(0)  # no wall-clock limit: a busy machine is slow, not wrong
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(f"{request.url} ({request.failure})"))
    page.on("response", lambda response: failed.append(f"{response.url} ({response.status})")
            if response.status >= 400 else None)
    problems: list[str] = []
    counts = {"formulas": 0, "figures": 0, "tables": 0}
    for name in _read_pages(site):
        page.goto(served + name, wait_until="networkidle")  # every request of the page done: none aborted
        page.wait_for_function("() => document.fonts.status === 'loaded'")
        math = page.evaluate(MATH)
        counts["formulas"] += len(math)
        problems += [f"{name}: formula not typeset: {m['raw']!r}" for m in math if not m["typeset"] or m["raw"]]
        for figure in page.evaluate(FIGURES):
            counts["figures"] += 1
            if not figure["loaded"]:
                problems.append(f"{name}: figure {figure['src']} did not load")
            elif figure["link"] != figure["src"]:
                problems.append(f"{name}: figure {figure['src']} does not open at full size (link {figure['link']})")
            elif figure["shown"] < min(figure["natural"], figure["column"]) - 2:
                problems.append(f"{name}: figure {figure['src']} drawn {figure['shown']:.0f} px wide, narrower than "
                                f"the column ({figure['column']:.0f} px) and than itself ({figure['natural']} px)")
            else:
                problems += _small_text(site, name, figure)
        counts["tables"] += page.locator("article table").count()
        tables = page.evaluate(TABLES)
        problems += [f"{name}: table {table['head']!r} is {table['width']:.0f} px wide, {table['beyond']:.0f} px "
                     f"beyond the {table['column']:.0f} px column, cut off" for table in tables if table["beyond"] > 1]
        problems += [f"{name}: table {table['head']!r} hides {table['hidden']:.0f} px to scroll to, with no scroll "
                     f"bar and no shaded edge to show it" for table in tables
                     if table["scrolls"] and not table["bar"] and not table["shaded"]]
        problems += [f"{name}: a table cell breaks the word {word!r}" for word in page.evaluate(BROKEN_WORDS)]
    page.close()
    print(f"{len(_read_pages(site))} pages: {counts}")
    assert counts["formulas"] >= 6 and counts["figures"] >= 30 and counts["tables"] >= 50, counts
    assert not failed, failed[:10]
    assert not problems, problems[:20]


def _small_text(site: Path, name: str, figure: dict[str, object]) -> list[str]:
    """The problem with a figure of page ``name`` as the browser drew it: its smallest text (its PNG's
    ``SMALLEST_TEXT_KEY``, scaled by the width it is shown at over its own) under ``MIN_TEXT_PX``, or a PNG that
    does not record it; none for a picture that is not a PNG (the tutorial's animation, frames of the same
    renderer as its PNGs)."""
    src = str(figure["src"])
    path = site / posixpath.normpath(posixpath.join(posixpath.dirname(name), unquote(urlsplit(src).path)))
    if path.suffix.lower() != ".png":
        return []
    with Image.open(path) as image:
        recorded = image.info.get(SMALLEST_TEXT_KEY)
    if recorded is None:
        return [f"{name}: figure {src} does not record its smallest text ({SMALLEST_TEXT_KEY!r}; save it with "
                f"bandit_gym.plotting.save_figure)"]
    shown = float(recorded) * float(figure["shown"]) / float(figure["natural"])  # type: ignore[arg-type]
    if shown < MIN_TEXT_PX:
        return [f"{name}: figure {src} has text {shown:.1f} px high as shown ({recorded} px in its "
                f"{figure['natural']} px wide PNG, drawn {float(figure['shown']):.0f} px wide), under "  # type: ignore[arg-type]
                f"{MIN_TEXT_PX:g} px"]
    return []


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        for key in ("href", "src"):
            if found.get(key) and (tag in ("a", "img") or key == "src"):
                self.links.append(str(found[key]))


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_no_link_of_the_site_leads_nowhere(site: Path) -> None:
    """Every relative link and picture of every page (the API reference's too) names a file of the built site,
    and every anchor an element of that page: a data file linked from a page is in the site."""
    parsed = {name: _parse(site / name) for name in _pages(site)}
    dead = []
    for name, page in parsed.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("//", "mailto:")):
                continue
            target = (site / name).parent / unquote(parts.path) if parts.path else site / name
            if target.is_dir():
                target = target / "index.html"
            if not target.resolve().is_file():
                dead.append(f"{name}: {link} (no file)")
            elif parts.fragment and target.suffix == ".html":
                key = target.resolve().relative_to(site.resolve()).as_posix()
                ids = parsed[key].ids if key in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    dead.append(f"{name}: {link} (no anchor)")
    assert len(parsed) > 40
    assert not dead, dead[:20]


def test_the_math_engine_is_bundled_not_fetched(site: Path) -> None:
    """KaTeX's script, style sheet and fonts are files of the site; no page loads a script from another host."""
    for name in ("assets/katex/katex.min.js", "assets/katex/katex.min.css", "assets/katex/contrib/auto-render.min.js",
                 "assets/javascripts/katex-init.js"):
        assert (site / name).is_file(), name
    fonts = re.findall(r"url\((fonts/[^)]+\.woff2)\)", (site / "assets/katex/katex.min.css").read_text())
    assert fonts and all((site / "assets/katex" / font).is_file() for font in fonts)
    for name in _pages(site):
        scripts = re.findall(r'<script[^>]+src="([^"]+)"', (site / name).read_text(encoding="utf-8"))
        assert not [src for src in scripts if src.startswith(("http:", "https:", "//"))], name


def test_the_site_builds_with_zensical_the_themes_successor(tmp_path: Path) -> None:
    """Material for MkDocs reaches its end of life on 2027-05-05; Zensical, its maintained successor by the same
    team, builds this site from the same ``mkdocs.yml`` (the API reference staged first, as the MkDocs hook does),
    strictly: no warning, no dead anchor."""
    zensical = shutil.which("zensical")
    if zensical is None:
        _need("zensical is not installed (the docs extra)")
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    # Zensical's rule: the configuration sits in the project's root and the site is built inside it (an ignored
    # file and folder, removed after)
    built = ROOT / "build" / f"zensical-site-{os.getpid()}"
    config.update(site_dir=str(built))
    config.pop("hooks")  # Zensical runs no MkDocs hook: the staging below is what the hook does, and so is
    for extension in config["markdown_extensions"]:  # the changelog's snippet found from the root, not the cwd
        if isinstance(extension, dict) and "pymdownx.snippets" in extension:
            extension["pymdownx.snippets"]["base_path"] = [str(ROOT)]
    copy = ROOT / f".zensical-{os.getpid()}.yml"
    copy.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        subprocess.run([sys.executable, str(ROOT / "scripts" / "mkdocs_hooks.py")], check=True, cwd=tmp_path)
        done = subprocess.run([zensical, "build", "--strict", "-f", str(copy.resolve())], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        assert "No issues found" in done.stdout + done.stderr
        assert (built / "lab-regret" / "index.html").is_file()
        assert "ArmwisePPO" in (built / "api" / "agents" / "index.html").read_text(encoding="utf-8")
    finally:
        copy.unlink()
        shutil.rmtree(built, ignore_errors=True)
