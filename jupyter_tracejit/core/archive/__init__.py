"""A saved model read back as a run, the model never run: :func:`.saved.load` (``tj.load``) reads either kind,
:func:`.load.load_archive` TorchScript archives (``.pt``), :func:`.exported.load_exported` exported programs
(``.pt2``). (``load`` is not re-exported here: it would hide the :mod:`.load` module of the package.)"""

from .load import BACKEND, load_archive

__all__ = ["BACKEND", "load_archive"]
