"""Which TorchScript node kinds have which role (:data:`~jupyter_tracejit.core.graph.NODE_ROLES`): the one place
that knows TorchScript's spelling of structure. Torch-free: version-1 graphs (saved before nodes carried a role)
are read through this table too (:mod:`jupyter_tracejit.core.legacy`), and the run schema carries a copy for the
front end's reader of those files (``x-torchscript-roles``, checked by ``tests/core/test_graph.py``)."""

from __future__ import annotations

TORCHSCRIPT_ROLES: dict[str, str] = {
    "prim::Constant": "constant",
    "prim::GetAttr": "getattr",
    "prim::ListConstruct": "list",
    "prim::TupleConstruct": "tuple",
    "prim::DictConstruct": "dict",
    "prim::ListUnpack": "unpack",
    "prim::TupleUnpack": "unpack",
    "prim::TupleIndex": "index",
}


def role_of(kind: str) -> str:
    """The role of a node of this kind: everything that is not structure is an ``op``."""
    return TORCHSCRIPT_ROLES.get(kind, "op")
