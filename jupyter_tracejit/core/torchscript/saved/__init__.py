"""TorchScript archives (``torch.jit.save``, ``.pt``) read back as runs, nothing of the model run: :mod:`.load`
(``load_archive``), the findings read from the graphs alone (:mod:`.findings`), the original source lines from the
archive's debug ranges (:mod:`.source`), and the bounded process an archive whose code runs at load is read in
(:mod:`.sandbox`)."""
