"""Saved models read back as runs, the model never run, the part every back end shares: what a file is, from its
first bytes and zip directory (:mod:`.layout`), what may run when torch reads it (:mod:`.guard`: the pre-scan and
the guarded loaders), and ``tj.load`` (:mod:`.saved`), which hands a file to the back end that reads its kind
(the registry's saved files: ``core/torchscript/saved/`` for ``.pt``, ``core/export/saved.py`` for ``.pt2``).

:mod:`.guard` and :mod:`.layout` are torch-free: the server extension reads a file's zip directory with them without
importing torch."""
