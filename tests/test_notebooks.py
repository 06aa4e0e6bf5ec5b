"""The tutorial course (notebooks/): every notebook executes clean in a real kernel, its saved copy is not stale,
and it still shows what its text claims.

Each notebook is executed once from its source (notebooks/src) by ``notebooks/build.py``; the fresh copy is compared
with the saved one (volatile bits set aside) and searched for the facts the text states.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from jupyter_tracejit.core.compile.request import compile_support_problem
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.widgets import RUN_MIME, run_from_mime, run_mime_payload

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]-*.py"))


def _build_module():
    spec = importlib.util.spec_from_file_location("tutorial_build", ROOT / "notebooks" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _text(nb) -> str:
    """Every cell's text: what it printed to each stream joined as written (the kernel splits a stream into
    several outputs when it flushes between two writes: print("as written:", tag) arrived as 'as written:' and
    ' data_dependent' on a loaded machine), then its plain-text results."""
    parts = []
    for cell in nb.cells:
        streams: dict[str, str] = {}
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                name = out.get("name", "")
                streams[name] = streams.get(name, "") + "".join(out.get("text", ""))
            elif "text/plain" in out.get("data", {}):
                parts.append(out["data"]["text/plain"])
        parts.extend(streams.values())
    return "\n".join(parts)


def _runs(nb) -> list[dict]:
    return [
        run_from_mime(o["data"][RUN_MIME])
        for c in nb.cells
        for o in c.get("outputs", [])
        if RUN_MIME in o.get("data", {})
    ]


#: what each notebook's text claims, as it must appear in the fresh outputs
CLAIMS = {
    "01": ["Python ran 3 times while tracing", "3 entries — the traced function did not append", "'aten::linear': 2"],
    "02": [
        "aten::mul in the trace, aten::sub in the check trace",
        "only in the check trace: aten::select",
        "'disagree'",
        "tracer warnings: 0 | check: passed",
        "model_step: ok",
        "['prim::Loop']",
    ],
    "03": [
        "to_int at line 2",
        "['output_mismatch_python', 'tensor_const', 'to_number']",
        "Expected 3 elements in a list but found 5",
        "['live_refs']",
        "['len', 'tensor_const', 'to_number'] -> []",
    ],
    "04": [
        "['list_output']",
        "strict mode rejects",
        "returns a tuple",
        "Dict[str, Tensor]",
        "trace doesn't support compiling individual module's functions",
        "['forward', 'encode', 'decode']",
        "mask: Tensor",
        "False True True",
    ],
    "05": [
        "BatchNorm traced in training mode",
        "after %trace,          num_batches_tracked = 0",
        "model still in train mode: True",
        "'aten::add_': 1",  # train mode counts batches; the eval-mode graph has no aten::add_
        "aten::_transformer_encoder_layer_fwd in the check trace",
        'device=torch.device("cpu")',
        "ok where it was traced; warning for a GPU target",
        "False → True",
    ],
    "06": [
        "strict mode rejects",
        "sdpa_attention.py:159",
        "Tracer cannot infer type of CausalLMOutputWithCrossAttentions",
        'device "cpu" baked into the graph',
        "input 5 of aten::scaled_dot_product_attention differs: 1 vs 0",
        "outputs agree anyway: True",
        "returns dict ['last_hidden_state', 'pooler_output']",
    ],
    "07": [
        "DeprecationWarning: `torch.jit.trace` is deprecated",
        "['deprecated', 'to_bool']",
        "RecursiveScriptModule tensor([2., 2., 2.])",
        "Guard failed: x.size()[0] == 3",
        "specialized it to be a constant (3)",
        "GuardOnDataDependentSymNode",
        "fixed: runs on 5 rows",
    ],
    "08": [
        "s70: backed, 2..64, from ['input_ids.size()[1]']",
        "guards: []",
        "range s70=64 (max): input_ids.size()[1]",
        "['Long(2, 64)']  outputs agree: True",
        "(100% of those export could have)",
        "only_export      modeling_bert.py, line 661",
        "data_dependent at cell [8], line 3 'if x.sum() > 0:'",
        "['higher_order::cond']",
        "jit.trace: Detected that you are using FX to torch.jit.trace a dynamo-optimized function",
        "constraint_violation — Constraints violated (rows)!",
        "x.size()[0] became the constant 3 on this line (Eq(s77, 3))",
        "static   {'x': None}",
        "offered — the graph export would have made",
        "[('dim_specialized', 'x.size()[0] became the constant 3')]",
        "check_inputs[0] ['Float(5, 4)'] -> Guard failed: x.size()[0] == 3",
        "same as the loop on 7 rows",
        "data_dependent at cell [16], line 4 'if k == 0:'",
        "symbols: [('u0', 'unbacked', 1, 8)]",
        "runtime assert u0 >= 1 at cell [17], line 3",
        "n = 0: Runtime assertion failed for expression u0 >= 1",
        "data_dependent_error Eq(u0, 1) at cell [8], line 3",
        "as written: data_dependent",
        "0 lines differ",
    ],
    "09": [
        "GB0170 cell [2], line 9: if attention_mask.min() == 0:",
        "GB0124 cell [2], line 14: tokens = int(attention_mask.sum().item())",
        'GB0059 cell [2], line 15: print(f"pooled {tokens} tokens")',
        "3 graphs; Classifier: problems;",
        "graphs: ['forward'] breaks: []",
        "call 1: input_ids.size()[1] was 16, now 24 (modeling_bert.py:99)",
        "(torch._dynamo.mark_dynamic(input_ids, 1))",
        "('forward#1', [0, 1, 1, 1])",
        "call 3: input_ids.size()[1] was 32, now 40",
        "recompilations: []",
        "input_ids is a int64 tensor of size [2, any]",
        "('Data dependent operator', 'spread = float(np.asarray(scores.detach()).std())')",
        "ScorerFixed: ok;",
    ],
}


def test_the_course_is_complete_and_in_order() -> None:
    build = _build_module()
    assert [s.name[:2] for s in SOURCES] == ["01", "02", "03", "04", "05", "06", "07", "08", "09"]
    for source in SOURCES:
        saved = build.saved_path(source)
        assert saved.exists(), f"{saved.name} is not built: python notebooks/build.py {source.name[:2]}"
        nb = json.loads(saved.read_text(encoding="utf-8"))
        markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
        headings = [line for m in markdown for line in m.splitlines() if line.startswith("## ")]
        assert "## Exercise" in headings and "## What to remember" in headings, source.name
        solutions = [c for c in nb["cells"] if "solution" in c["metadata"].get("tags", [])]
        assert solutions and all(c["metadata"]["jupyter"]["source_hidden"] for c in solutions), source.name
        # saved with outputs: every code cell ran, and the explorers are there for GitHub / a kernel-free reload
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(c["execution_count"] for c in code), source.name
        explorers = [o for c in code for o in c["outputs"] if RUN_MIME in o.get("data", {})]
        assert explorers and all("text/html" in o["data"] for o in explorers), source.name


def test_build_check_detects_a_stale_notebook(tmp_path: Path) -> None:
    """--check compares structurally: an edited output or source is stale; timings, addresses and ids are not."""
    build = _build_module()
    nbformat = pytest.importorskip("nbformat")
    saved = nbformat.read(build.saved_path(SOURCES[0]), as_version=4)
    same = nbformat.from_dict(json.loads(json.dumps(saved)))
    for cell in same.cells:
        for out in cell.get("outputs", []):
            if RUN_MIME in out.get("data", {}):
                run = run_from_mime(out["data"][RUN_MIME])
                out["data"][RUN_MIME] = run_mime_payload({**run, "run_id": "another", "timings": {"total": 99.0}})
            if "application/vnd.jupyter.widget-view+json" in out.get("data", {}):
                out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] = "another"
            if out.get("output_type") == "execute_result" and "0x" in str(out["data"].get("text/plain")):
                out["data"]["text/plain"] = "<object at 0x1234>"
    assert build.differences(saved, same) == []
    edited = nbformat.from_dict(json.loads(json.dumps(saved)))
    stream = next(o for c in edited.cells for o in c.get("outputs", []) if o.get("output_type") == "stream")
    stream["text"] = "something else\n"
    assert any("outputs changed" in p for p in build.differences(saved, edited))
    edited.cells[0].source += " (edited)"
    assert any("source changed" in p for p in build.differences(saved, edited))


#: tutorials that take a minute to run on a small machine (notebook 9 compiles a BERT seven times): the slow lane
SLOW = ("09",)


@pytest.mark.parametrize(
    "source",
    [pytest.param(s, marks=pytest.mark.slow) if s.name.startswith(SLOW) else s for s in SOURCES],
    ids=[s.stem for s in SOURCES],
)
def test_tutorial_executes_and_its_saved_copy_is_current(source: Path, tmp_path: Path) -> None:
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    if source.name.startswith(("06", "08", "09")):
        pytest.importorskip("transformers")
    if source.name.startswith("08") and export_support_problem() is not None:
        pytest.skip(str(export_support_problem()))
    if source.name.startswith("09") and compile_support_problem() is not None:
        pytest.skip(str(compile_support_problem()))
    build = _build_module()
    nbformat = pytest.importorskip("nbformat")
    fresh = build.build(source, tmp_path)  # raises with the cell and its traceback when a cell fails
    assert build.errors(fresh) == []
    saved = nbformat.read(build.saved_path(source), as_version=4)
    stale = build.differences(saved, fresh)
    assert not stale, f"{source.stem} is stale, run python notebooks/build.py {source.name[:2]}:\n" + "\n".join(stale)
    text = _text(fresh)
    for claim in CLAIMS[source.name[:2]]:
        assert claim in text, f"{source.stem} no longer shows {claim!r}"
    assert _runs(fresh), "every tutorial shows at least one explorer"
    if source.name.startswith("08"):
        assert {run.get("backend") for run in _runs(fresh)} == {"export"}, "notebook 8's explorers show exports"
    if source.name.startswith("09"):
        assert {run.get("backend") for run in _runs(fresh)} == {"compile"}, "notebook 9's explorers show compiled runs"
