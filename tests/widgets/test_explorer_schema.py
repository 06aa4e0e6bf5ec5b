"""explorer.schema.json is the widget's wire contract: its traits, their defaults, the options bar (from the one
definition of the options) and the state of real explorers all agree with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import torch
from referencing import Registry, Resource

import jupyter_tracejit as tj
from jupyter_tracejit.core.options import MODULE_MODES
from jupyter_tracejit.core.torchscript.options import LIVE, SPECS
from jupyter_tracejit.widgets import OPTION_KEYS, TraceExplorer, explore

from ..models import LinearReLU
from .fakes import FakeClock

PACKAGE = Path(tj.__file__).parent


def schema(name: str) -> dict[str, Any]:
    return json.loads((PACKAGE / name).read_text())


def validator() -> jsonschema.Draft7Validator:
    run, state = schema("core/run.schema.json"), schema("widgets/explorer.schema.json")
    registry = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in (run, state)])
    return jsonschema.Draft7Validator(state, registry=registry)


def synced_traits() -> dict[str, Any]:
    ex = TraceExplorer()
    return {name: ex.trait_defaults(name) for name in ex.keys if not name.startswith("_") and name != "layout"}


def test_every_synced_trait_is_in_the_schema_with_its_default() -> None:
    properties = schema("widgets/explorer.schema.json")["properties"]
    traits = synced_traits()
    assert set(properties) == {k for k in traits if k not in ("tabbable", "tooltip")}
    for name, prop in properties.items():
        assert prop["default"] == traits[name], name


def test_the_options_bar_is_the_live_options() -> None:
    options = schema("widgets/explorer.schema.json")["definitions"]["ExplorerOptions"]
    assert (
        tuple(options["properties"])
        == OPTION_KEYS
        == tuple("check_inputs_enabled" if n == "check_inputs" else n for n in LIVE)
    )
    for key, prop in options["properties"].items():
        spec = SPECS["check_inputs" if key == "check_inputs_enabled" else key]
        assert prop["x-label"] == spec.label, key
        if key != "check_inputs_enabled":
            assert prop["default"] == spec.default and prop["description"] == spec.doc, key
    assert options["properties"]["module_mode"]["enum"] == list(MODULE_MODES)


@pytest.mark.parametrize("checks", [None, [(torch.rand(3, 4),), (torch.rand(5, 4),)]])
def test_the_state_of_real_explorers_validates(clock: FakeClock, checks: Any) -> None:
    ex = explore(LinearReLU(), (torch.rand(2, 4),), check_inputs=checks, scheduler=clock)
    v = validator()
    for state in (ex.get_state(), TraceExplorer().get_state()):
        synced = {k: state[k] for k in schema("widgets/explorer.schema.json")["properties"]}
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(synced)]
        assert errors == [], errors[:5]
    ex.add_run(tj.trace(LinearReLU(), (torch.rand(2, 4),)))
    ex.compare(ex.runs[0]["run_id"], ex.runs[1]["run_id"])
    errors = list(v.iter_errors({k: ex.get_state()[k] for k in schema("widgets/explorer.schema.json")["properties"]}))
    assert errors == []


def test_every_message_the_explorer_handles_is_in_the_schema() -> None:
    state = schema("widgets/explorer.schema.json")
    request = jsonschema.Draft7Validator(state["definitions"]["ExplorerRequest"])
    messages = [
        {"type": "retrace"},
        {"type": "cancel"},
        {"type": "show_run", "run_id": "abc"},
        {"type": "compare", "a": "a", "b": "b", "method": "forward"},
        {"type": "draft"},
    ]
    for message in messages:
        assert list(request.iter_errors(message)) == [], message
    assert list(request.iter_errors({"type": "interrupt"}))
