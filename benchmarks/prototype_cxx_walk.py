"""What a compiled graph walk would save: a measurement for the decision #8 is blocked on, not product code.

``extract_graph`` reads a traced graph through torch's pybind accessors, ~4.5 µs of calls a node, which keeps the
12,000-op dense chain at ~1.55-1.6x of ``torch.jit.trace``. This script compiles a small C++ walk of the same
graph (``torch.utils.cpp_extension.load_inline``: g++ and ninja, about 20 s the first time, cached after) that
hands Python one tuple per node, builds the same kind of ``Node`` / ``Value`` objects from them (simplified: no
attributes, blocks or module types, which a dense chain does not have), and prints both against
``extract_graph`` on the chain::

    .venv/bin/python benchmarks/prototype_cxx_walk.py

2026-11-25, 2 CPUs: C++ walk 1.9-2.2 µs a node, with our objects 2.5-2.8 µs, ``extract_graph`` 6.0-6.2 µs; on
the chain that is ~40 ms of tj's ~0.31 s, which would bring the dense ratio to about 1.4x. Shipping it means a
compiled extension against torch 2.13's headers (a compiler where the package is installed, one build per torch
release) with the Python extraction as the fallback and a parity test between them: a packaging decision.
"""

from __future__ import annotations

import gc
import shutil
import statistics
import sys
import time
from typing import Any

import torch
from torch.utils.cpp_extension import load_inline

from jupyter_tracejit.core.graph import Graph, Node, Value
from jupyter_tracejit.core.torchscript.extract import extract_graph
from jupyter_tracejit.core.torchscript.scope_and_stack import parse_stack, scope_path

NODES = 12_000

CPP = r"""
#include <torch/extension.h>
#include <torch/csrc/jit/ir/ir.h>
namespace py = pybind11;
using namespace torch::jit;

struct Walker {
  std::unordered_map<const Value*, int64_t> ids;
  std::unordered_map<std::string, py::object> fields;  // tensor type printout -> (shape, dtype, device, rg)
  std::string last_stack;
  py::list out;

  py::object value(Value* v) {
    int64_t vid = ids.size();
    ids[v] = vid;
    std::string key = v->type()->str();
    auto it = fields.find(key);
    if (it == fields.end()) {
      py::object f = py::none();
      if (auto tt = v->type()->cast<TensorType>()) {
        auto sizes = tt->sizes().sizes();
        py::object shape = py::none();
        if (sizes) {
          py::tuple s(sizes->size());
          for (size_t i = 0; i < sizes->size(); ++i)
            s[i] = (*sizes)[i] ? py::object(py::int_(*(*sizes)[i])) : py::none();
          shape = s;
        }
        auto st = tt->scalarType();
        auto dev = tt->device();
        auto rg = tt->requiresGrad();
        f = py::make_tuple(shape, st ? py::object(py::str(c10::toString(*st))) : py::none(),
                           dev ? py::object(py::str(dev->str())) : py::none(),
                           rg ? py::object(py::bool_(*rg)) : py::none());
      } else {
        f = py::str(key);
      }
      it = fields.emplace(key, f).first;
    }
    return py::make_tuple(vid, v->debugName(), it->second);
  }

  void block(Block* b) {
    for (Node* n : b->nodes()) {
      py::tuple ins(n->inputs().size());
      for (size_t i = 0; i < n->inputs().size(); ++i) ins[i] = py::int_(ids.at(n->inputs()[i]));
      py::tuple outs(n->outputs().size());
      for (size_t i = 0; i < n->outputs().size(); ++i) outs[i] = value(n->outputs()[i]);
      std::string stack = n->sourceRange().str();
      py::object stack_obj = py::none();
      if (stack != last_stack) { stack_obj = py::str(stack); last_stack = stack; }
      out.append(py::make_tuple(n->kind().toQualString(), ins, outs, n->scopeName(), stack_obj));
    }
  }
};

py::list walk(std::shared_ptr<Graph> g) {
  Walker w;
  for (Value* v : g->inputs()) w.value(v);
  w.block(g->block());
  return w.out;
}
"""


def build(walk: Any, g: torch._C.Graph) -> Graph:
    """Our graph objects from the C++ walk's tuples (the collector paused, as extract_graph does)."""
    gc_was = gc.isenabled()
    gc.disable()
    try:
        values: list[Value] = []
        nodes: list[Node] = []
        stacks: dict[str, Any] = {}
        frames: dict[str, Any] = {}
        paths: dict[str, str] = {}
        source = None
        for nid, (kind, ins, outs, scope, stack) in enumerate(walk(g)):
            vids = []
            for vid, name, fields in outs:
                if type(fields) is tuple:
                    values.append(Value(vid, name, "Tensor", *fields, nid))
                else:
                    values.append(Value(vid, name, fields, None, None, None, None, nid))
                vids.append(vid)
            if stack is not None:
                source = stacks.get(stack)
                if source is None:
                    source = stacks[stack] = parse_stack(stack, frames)
            path = paths.get(scope)
            if path is None:
                path = paths[scope] = scope_path(scope)
            nodes.append(Node(nid, kind, ins, tuple(vids), path, source, {}, (), None, False))
        return Graph(method="forward", nodes=nodes, values=values, inputs=(0,), outputs=(len(values) - 1,))
    finally:
        if gc_was:
            gc.enable()


def chain_fn(x: torch.Tensor) -> torch.Tensor:
    for _ in range(NODES):
        x = torch.sin(x)
    return x


def main() -> None:
    if shutil.which("c++") is None or shutil.which("ninja") is None:
        sys.exit("prototype_cxx_walk.py needs a C++ compiler and ninja on PATH (apt-get install g++ ninja-build)")
    walk = load_inline("tj_walk_proto", cpp_sources=[CPP], functions=["walk"], extra_cflags=["-O2"]).walk
    g = torch.jit.trace(chain_fn, (torch.randn(3),), check_trace=False).graph
    cases = {
        "C++ walk (tuples)": lambda: walk(g),
        "C++ walk + our objects": lambda: build(walk, g),
        "extract_graph": lambda: extract_graph(g, number_unnamed=True),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(9):
        for name, case in cases.items():
            gc.collect()
            t0 = time.perf_counter()
            result = case()
            times[name].append(time.perf_counter() - t0)
            del result
    print(f"chain of {NODES:,} sin, median of 9 after a gc.collect() each:")
    for name, t in times.items():
        m = statistics.median(t)
        print(f"  {name:24} {m * 1000:6.1f} ms  {m / NODES * 1e6:5.2f} µs a node")


if __name__ == "__main__":
    main()
