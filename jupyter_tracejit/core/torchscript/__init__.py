"""The TorchScript back end: ``torch.jit.trace`` captured, its graphs turned into :class:`~..graph.Graph` s, checked
and probed. Importing this package does not import torch; its modules that need torch import it themselves."""
