"""What a trace may change in the user's modules, saved before and put back after.

Tracing runs the user's ``forward`` (1 + 2 x check inputs times, more with the probe): BatchNorm in train mode
updates its running statistics, code may rebind attributes or flip ``training`` flags. :class:`ModuleState`
snapshots the ``training`` flags, the buffers and (optionally) the parameters of some modules, says which
buffers changed, and restores them in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

#: (owner module, attribute name, the tensor, its snapshot)
_Entry = tuple[torch.nn.Module, str, torch.Tensor, torch.Tensor]


def _same(t: torch.Tensor, snapshot: torch.Tensor) -> bool:
    """``t`` still equals its snapshot. A meta tensor has no values to change: only its shape can."""
    if t.shape != snapshot.shape:
        return False
    return t.is_meta or torch.equal(t.detach(), snapshot)


class ModuleState:
    """``training`` flags, buffers and (with ``parameters=True``) parameters of ``roots`` and their submodules."""

    def __init__(self, roots: Sequence[torch.nn.Module], *, parameters: bool = False) -> None:
        self.flags: list[tuple[torch.nn.Module, bool]] = []
        self.params: list[_Entry] = []
        self.buffers: list[_Entry] = []
        #: dotted buffer names (``layer1.0.bn.running_mean``) by tensor id, for reporting
        self._buffer_names: dict[int, str] = {}
        seen_modules: set[int] = set()
        seen_tensors: set[int] = set()
        for root in roots:
            for prefix, m in root.named_modules(remove_duplicate=False):
                if id(m) in seen_modules:
                    continue
                seen_modules.add(id(m))
                self.flags.append((m, m.training))
                stores = [(self.buffers, m.named_buffers(recurse=False))]
                if parameters:
                    stores.append((self.params, m.named_parameters(recurse=False)))
                for store, named in stores:
                    for name, t in named:
                        if t is None or id(t) in seen_tensors:
                            continue
                        seen_tensors.add(id(t))
                        store.append((m, name, t, t.detach().clone()))
                        if store is self.buffers:
                            self._buffer_names[id(t)] = f"{prefix}.{name}" if prefix else name

    def changed_buffers(self) -> list[str]:
        """Dotted names of the buffers whose value (or shape) differs from the snapshot."""
        return [self._buffer_names[id(t)] for _, _, t, snap in self.buffers if not _same(t, snap)]

    @staticmethod
    def _restore_tensors(entries: list[_Entry], kind: str) -> None:
        for owner, name, t, snap in entries:
            try:
                if not isinstance(owner, torch.jit.ScriptModule):
                    store = owner._parameters if kind == "param" else owner._buffers
                    if store.get(name) is not t:
                        store[name] = t  # type: ignore[assignment]  # the user's code rebound the attribute
                if _same(t, snap):
                    continue
                with torch.no_grad():
                    if t.shape == snap.shape:
                        t.copy_(snap)
                    else:
                        t.data = snap.clone()
            except Exception:  # a hostile or exotic tensor must not stop the others from being restored
                pass

    def restore_buffers(self) -> None:
        self._restore_tensors(self.buffers, "buffer")

    def restore_flags(self) -> None:
        for m, flag in self.flags:
            try:
                if m.training != flag:
                    m.training = flag
            except Exception:
                pass

    def restore(self) -> None:
        """Parameters (when saved), buffers and ``training`` flags, as they were."""
        self._restore_tensors(self.params, "param")
        self.restore_buffers()
        self.restore_flags()


__all__ = ["ModuleState"]
