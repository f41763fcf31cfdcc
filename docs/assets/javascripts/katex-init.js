// Render the formulas that pymdownx.arithmatex marked (\( ... \) inline, \[ ... \] displayed) with the KaTeX
// bundled in docs/assets/katex: nothing is fetched at run time. Material's document$ re-runs it after an
// instant navigation; without it, once when the page has loaded.
(function () {
  function render(root) {
    root.querySelectorAll(".arithmatex").forEach(function (element) {
      renderMathInElement(element, {
        delimiters: [
          { left: "\\[", right: "\\]", display: true },
          { left: "\\(", right: "\\)", display: false },
        ],
        throwOnError: false,
      });
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function (page) { render(page.body); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { render(document.body); });
  }
})();
