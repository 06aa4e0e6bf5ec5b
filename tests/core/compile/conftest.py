"""Every compile test needs a torch the compile back end supports (torch 2.13 and newer: core/compile/request.py
``MIN_TORCH``); on an older one (the CI matrix's floor, 2.4.1) they are skipped with the reason, and
``test_api.py``'s refusal test checks what such a torch gets instead."""

from __future__ import annotations

import pytest

from jupyter_tracejit.core.compile.request import compile_support_problem

#: tests that run on every torch: what an unsupported one is told
_EVERY_TORCH = {"test_an_unsupported_torch_gets_a_run_that_says_why_and_what_to_do"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problem = compile_support_problem()
    if problem is None:
        return
    skip = pytest.mark.skip(reason=problem)
    for item in items:
        if "core/compile/" in str(item.path).replace("\\", "/") and item.name not in _EVERY_TORCH:
            item.add_marker(skip)
