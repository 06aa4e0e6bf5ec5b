"""The ``torch.compile`` back end: TorchDynamo's graphs of a model, every graph break at the user's line, every
recompilation with the guard that failed, and the check of the compiled model against the eager one.

``request.compile`` (``tj.compile``) asks; :mod:`.session` runs the model under ``torch.compile`` with a
recording back end, with :mod:`.hygiene` keeping dynamo's process-wide state (caches on code objects, counters,
config, loggers) as the user had it; :mod:`.breaks` reads torch's graph-break reports (and its registry of break
types), :mod:`.guards` writes guards in the inputs' terms and :mod:`.failures` the guards that failed; :mod:`.report`
assembles the torch-free records of :mod:`.records` (``run.compile``): the graphs and regions (:mod:`.graphs`), the
breaks joined to the ops around them (:mod:`.break_table`), the recompilations (:mod:`.recompiles`); :mod:`.findings`
adds what torch does not say. :mod:`.command` turns ``%compile`` / ``tracejit compile`` calls into runs.
"""
