"""What plain torch.jit.trace says about a case: the oracle our verdicts must agree with."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class TorchVerdict:
    #: "ok", "check_error" (TracingCheckError), "mismatch" (output-mismatch warning only) or "error"
    outcome: str
    exception: BaseException | None = None
    messages: list[str] = field(default_factory=list)

    @property
    def check_failed(self) -> bool:
        return self.outcome in ("check_error", "mismatch")


def torch_verdict(fn: Any, *args: Any, module: bool = False, **kwargs: Any) -> TorchVerdict:
    """Run torch.jit.trace (or trace_module) with checks on, as a user would, and classify the result."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.TracerWarning.ignore_lib_warnings()
        try:
            if module:
                torch.jit.trace_module(fn, *args, **kwargs)
            else:
                torch.jit.trace(fn, *args, **kwargs)
        except torch.jit.TracingCheckError as e:
            return TorchVerdict("check_error", e, [str(w.message) for w in caught])
        except Exception as e:
            return TorchVerdict("error", e, [str(w.message) for w in caught])
    messages = [str(w.message) for w in caught]
    if any("does not match the corresponding output" in m for m in messages):
        return TorchVerdict("mismatch", None, messages)
    return TorchVerdict("ok", None, messages)


def torch_exception(fn: Any, *args: Any, **kwargs: Any) -> BaseException | None:
    """The exception plain torch.jit.trace raises for this call (its warnings silenced), or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.jit.trace(fn, *args, **kwargs)
        except Exception as e:
            return e
    return None


@functools.cache
def torch_deprecates_jit_trace() -> bool:
    """Whether the installed torch says torch.jit.trace is deprecated (2.13 and 2.14 do, 2.4 does not): asked of
    torch itself, so a test can hold for either kind of torch."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(lambda x: x + 1, (torch.ones(1),), check_trace=False)
    notices = (DeprecationWarning, FutureWarning, PendingDeprecationWarning)  # 2.13 gives the first, 2.14 the second
    return any(issubclass(w.category, notices) and "torch.jit" in str(w.message) for w in caught)
