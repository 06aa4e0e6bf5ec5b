"""``tracejit migrate -o report.html``'s page opened from disk (file://, no server, the network cut off) in the
light and the dark colour scheme: one row per model with its status, the line export refused at or the dim it
specialised, the check and the trace ops matched; a model's name opens its explorer page, written beside it, whose
graph lays out offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_tracejit._dev.browser import SCREENSHOTS

from ..cli_run import run_cli
from ..models import line_in
from ..test_cli_migrate import LIST, MODELS
from .test_report import STATIC_JS, offline  # noqa: F401  (the offline page fixture)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not STATIC_JS.exists():
        pytest.skip("the report bundle is not built (npm run build, or pip install -e .)")
    folder = tmp_path_factory.mktemp("migrate")
    (folder / "models").mkdir()
    (folder / "models" / "zoo.py").write_text(MODELS)
    (folder / "models.toml").write_text(LIST)
    code, _, _ = run_cli(folder, "migrate", "models.toml", "-o", "report.html")
    assert code == 0
    return folder / "report.html"


def rows(page: Any) -> dict[str, list[str]]:
    found = {}
    for row in page.locator("tr[data-model]").all():
        found[row.get_attribute("data-model")] = [c.inner_text() for c in row.locator("td").all()]
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_report_page_offline_and_a_row_opening_its_explorer(offline, report_page, scheme):  # noqa: F811
    op = offline(color_scheme=scheme)
    page = op.open(report_page)
    table = rows(page)
    assert list(table) == ["Net", "rows", "branchy"]
    assert [cells[1] for cells in table.values()] == ["ok", "warnings", "refused"]
    assert table["rows"][2] == f"x.size()[0] = 3 at zoo.py:{line_in(MODELS, 'specialises')}"
    assert table["branchy"][2].startswith(f"zoo.py:{line_in(MODELS, 'refused: a branch')}: GuardOnDataDependent")
    assert table["Net"][3] == "passed (3 input sets)" and table["Net"][4] == "100% (2/2)"
    badge = page.locator('tr[data-model="branchy"] .jp-TraceExplorer-badge')
    assert badge.evaluate("el => getComputedStyle(el).backgroundColor") != "rgba(0, 0, 0, 0)"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"migrate-report-{scheme}.png"), full_page=True)
    # the model's name opens its explorer page, beside the report: the export with its specialisation
    page.get_by_role("link", name="rows").click()
    page.wait_for_url("**/report_files/rows.html")
    explorer = page.locator("#tracejit-root .jp-TraceExplorer-root")
    explorer.locator(".jp-TraceExplorer-canvas svg g.node").first.wait_for()
    explorer.locator('.jp-TraceExplorer-tab[data-tab="guards"]').click()
    spec = explorer.locator('.jp-TraceExplorer-guard[data-guard-kind="specialization"]')
    assert spec.locator(".jp-TraceExplorer-loc").inner_text() == f"zoo.py:{line_in(MODELS, 'specialises')}"
    page.screenshot(path=str(SCREENSHOTS / f"migrate-report-model-{scheme}.png"))
    assert not op.blocked and not op.errors, (op.blocked, op.errors)
