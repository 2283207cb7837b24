"""The HTML audit in a real browser (headless Chromium): readable at phone and laptop widths,
sortable and filterable with no server and no external assets, valid ids, honest labels.

Skipped only where no Chromium is installed (Debian: `apt-get install chromium`).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import invoke, write_project

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (Debian: apt-get install chromium)")

REGISTRY = """\
version: 1
metrics:
  train/grad_norm:
    description: Gradient norm before clipping.
    semantics:
      clipping: before
  train/tokens: {}
"""
SOURCE = '''\
def log_step(writer, norm, tokens, step):
    """Log the step.

    Args:
        norm: the gradient norm after clipping, measured across every data-parallel rank of the job.
    """
    writer.add_scalar("train/grad_norm", norm, step)
    writer.add_scalar("train/tokens", tokens, step)
    writer.add_scalar("batch size", 8, step)
'''

# Runs after the page's own script, drives it as a reader would, and leaves what it saw in the
# DOM of the host page, which shows the audit in a frame of the width under test (Chromium's
# window is never narrower than 500 px).
PROBE = """
<script>
(function () {
  function shown() {
    return Array.prototype.filter.call(document.querySelectorAll(".matrix tbody tr"), function (r) { return !r.hidden; })
      .map(function (r) { return r.getAttribute("data-key"); });
  }
  function brokenWords() {
    var broken = [];
    document.querySelectorAll("q").forEach(function (q) {
      var walker = document.createTreeWalker(q, NodeFilter.SHOW_TEXT), node;
      while ((node = walker.nextNode())) {
        var re = /\\S+/g, m;
        while ((m = re.exec(node.data))) {
          var range = document.createRange();
          range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
          var tops = {};
          Array.prototype.forEach.call(range.getClientRects(), function (r) { if (r.width > 0) tops[Math.round(r.top)] = 1; });
          if (Object.keys(tops).length > 1) broken.push(m[0]);
        }
      }
    });
    return broken;
  }
  function brokenKeys() {  // a key may wrap after a separator, never inside a word of it
    var broken = [];
    document.querySelectorAll("th.metric code").forEach(function (code) {
      var text = code.textContent, re = /[^/_.\\-\\s]+/g, m, walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), node, nodes = [];
      while ((node = walker.nextNode())) nodes.push(node);
      function at(offset) {
        for (var i = 0; i < nodes.length; i++) { if (offset <= nodes[i].data.length) return [nodes[i], offset]; offset -= nodes[i].data.length; }
      }
      while ((m = re.exec(text))) {
        var range = document.createRange(), start = at(m.index), end = at(m.index + m[0].length);
        range.setStart(start[0], start[1]); range.setEnd(end[0], end[1]);
        var tops = {};
        Array.prototype.forEach.call(range.getClientRects(), function (r) { if (r.width > 0) tops[Math.round(r.top)] = 1; });
        if (Object.keys(tops).length > 1) broken.push(m[0]);
      }
    });
    return broken;
  }
  var seen = {width: window.innerWidth, page: document.documentElement.scrollWidth, broken: brokenWords(), brokenKeys: brokenKeys(), rows: shown()};
  var made = document.querySelector(".provenance");
  seen.provenance = made ? made.textContent : "";
  seen.ids = Array.prototype.map.call(document.querySelectorAll("[id]"), function (e) { return e.id; });
  seen.registry = Array.prototype.map.call(document.querySelectorAll(".matrix tbody tr"), function (r) {
    return [r.getAttribute("data-key"), r.cells[1].className];
  });
  var filter = document.getElementById("filter"), status = document.getElementById("status");
  filter.value = "GRAD"; filter.dispatchEvent(new Event("input"));
  seen.filtered = shown();
  filter.value = ""; filter.dispatchEvent(new Event("input"));
  status.value = "silent"; status.dispatchEvent(new Event("change"));
  seen.silent = shown();
  status.value = ""; status.dispatchEvent(new Event("change"));
  var buttons = document.querySelectorAll(".matrix thead button");
  buttons[0].click(); seen.descending = shown();
  buttons[0].click(); seen.ascending = shown();
  buttons[1].click(); seen.byRegistry = shown();
  seen.sortState = buttons[1].parentNode.getAttribute("aria-sort");
  var out = parent.document.createElement("pre");
  out.id = "probe"; out.textContent = JSON.stringify(seen);
  parent.document.body.appendChild(out);
})();
</script>
"""


def _look(page: Path, width: int, tmp: Path) -> dict[str, Any]:
    host = tmp / f"host-{width}.html"
    frame = f'<iframe src="{page.name}" style="width: {width}px; height: 900px; border: 0"></iframe>'
    host.write_text(f'<!DOCTYPE html><html><body style="margin: 0">{frame}</body></html>', encoding="utf-8")
    shutil.copy(page, tmp / page.name)
    command = [
        str(BROWSER),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--allow-file-access-from-files",
        f"--user-data-dir={tmp / 'profile'}",
        "--window-size=1280,1000",
        "--dump-dom",
        host.as_uri(),
    ]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    start = dom.index('<pre id="probe">') + len('<pre id="probe">')
    return json.loads(html.unescape(dom[start : dom.index("</pre>", start)]))


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("project")
    write_project(project, {"metrics.yaml": REGISTRY, "train.py": SOURCE})
    result = invoke("audit", str(project), "--format", "html")
    assert "<script src" not in result.output and "http" not in result.output and "<link" not in result.output
    path = project / "audit.html"
    path.write_text(result.output.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("width", [420, 800])
def test_the_page_fits_the_screen_without_breaking_words(page: Path, width: int, tmp_path: Path) -> None:
    seen = _look(page, width, tmp_path)
    assert seen["width"] == width
    assert seen["page"] <= width  # the matrix scrolls in its own box; the page does not
    assert seen["broken"] == []


@pytest.mark.slow
def test_rows_filter_and_sort_in_the_browser(page: Path, tmp_path: Path) -> None:
    seen = _look(page, 1200, tmp_path)
    assert seen["rows"] == ["batch size", "train/grad_norm", "train/tokens"]
    assert seen["filtered"] == ["train/grad_norm"]
    assert seen["silent"] == ["batch size", "train/tokens"]
    assert seen["descending"] == ["train/tokens", "train/grad_norm", "batch size"]
    assert seen["ascending"] == ["batch size", "train/grad_norm", "train/tokens"]
    assert seen["byRegistry"] == ["train/grad_norm", "batch size", "train/tokens"]  # contradict, then silent; ties keep their order
    assert seen["sortState"] == "ascending"


@pytest.mark.slow
def test_ids_are_valid_and_an_entry_that_states_nothing_is_silent(page: Path, tmp_path: Path) -> None:
    seen = _look(page, 1200, tmp_path)
    ids = seen["ids"]
    assert isinstance(ids, list) and len(ids) == len(set(ids)) and not any(any(c.isspace() for c in i) or not i for i in ids)
    assert seen["registry"] == [["batch size", "silent"], ["train/grad_norm", "contradict"], ["train/tokens", "silent"]]


LONG_KEYS = (
    "def log(writer, a, b, step):\n"
    "    writer.add_scalar('rollout/critic_value_head_estimate_after_whitening_per_token_mean', a, step)\n"
    "    writer.add_scalar('perf/actor_train_tflops_per_gpu_including_recomputation', b, step)\n"
)


@pytest.mark.slow
def test_keys_wrap_between_their_words_at_laptop_width(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", {"metrics.yaml": REGISTRY, "train.py": SOURCE, "logs.py": LONG_KEYS})
    path = project / "audit.html"
    path.write_text(invoke("audit", str(project), "--format", "html").output.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    seen = _look(path, 1280, tmp_path)
    assert seen["brokenKeys"] == [] and seen["broken"] == []
    assert seen["page"] <= 1280


@pytest.mark.slow
def test_the_page_says_what_made_it(page: Path, tmp_path: Path) -> None:
    provenance = _look(page, 1200, tmp_path)["provenance"]
    assert provenance.startswith("metriclint ") and "registry " in provenance and "metrics.yaml" in provenance
    assert re.search(r"\d{4}-\d{2}-\d{2}", provenance)
