"""The warning categories are one table (core/categories.py): the run schema's enum and x-categories are written from
it, and what Python decides about a category is read from it."""

from __future__ import annotations

import json

import pytest

from jupyter_tracejit.core import categories
from jupyter_tracejit.core.categories import SCHEMA_PATH, WARNING_CATEGORIES, WarningCategory, write_schema
from jupyter_tracejit.core.tracer_warnings import ADVICE, CATEGORIES, FROZEN, TraceWarning, classify
from jupyter_tracejit.core.verdict import NOT_ABOUT_THE_TRACE


def test_the_schema_carries_the_table_as_written_from_it():
    from jupyter_tracejit.core import registry

    assert registry.main(["--check"]) == 0, "run `python -m jupyter_tracejit.core.registry`"
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    category = schema["definitions"]["TraceWarning"]["properties"]["category"]
    assert category["enum"] == [c.name for c in WARNING_CATEGORIES]
    assert category["x-categories"] == categories.schema_rows()


def test_a_new_row_is_all_a_new_category_needs_in_the_schema(monkeypatch):
    row = WarningCategory("new_kind", "a new kind", "do this", "some torch text", about_the_trace=False)
    monkeypatch.setattr(categories, "WARNING_CATEGORIES", (*WARNING_CATEGORIES, row))
    written = json.loads(write_schema(SCHEMA_PATH.read_text(encoding="utf-8")))
    category = written["definitions"]["TraceWarning"]["properties"]["category"]
    assert category["enum"][-1] == "new_kind"
    assert category["x-categories"]["new_kind"] == {
        "title": "a new kind",
        "counted": True,
        "about_the_trace": False,
        "explains_divergences": True,
    }

    # the rest of the file is left as it was laid out
    def rest(text: str) -> list[str]:
        skip = ("new_kind", '"enum": ["to_bool"')
        return [line.rstrip(",") for line in text.splitlines() if not any(s in line for s in skip)]

    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert rest(write_schema(text)) == rest(text)


def test_python_reads_every_rule_from_the_table():
    assert list(CATEGORIES) == [c.name for c in WARNING_CATEGORIES]
    assert {c.name: c.advice for c in WARNING_CATEGORIES} == ADVICE
    assert {c.name for c in WARNING_CATEGORIES if c.frozen} == FROZEN
    assert {c.name for c in WARNING_CATEGORIES if c.counted and not c.about_the_trace} == NOT_ABOUT_THE_TRACE
    for c in WARNING_CATEGORIES:
        warning = TraceWarning(category=c.name, message="", file="", line=0)
        assert warning.is_user_problem == c.counted


@pytest.mark.parametrize("row", [c for c in WARNING_CATEGORIES if c.torch_text], ids=lambda c: c.name)
def test_each_torch_text_classifies_into_its_row(row):
    assert classify(f"... {row.torch_text} ...", "TracerWarning") == row.name


def test_a_more_specific_torch_text_wins_over_one_it_contains():
    message = "torch.from_numpy results are registered as constants in the trace. You can safely ignore this warning"
    assert classify(message, "TracerWarning") == "from_numpy_const"
