"""A saved model read back as a run: ``load_archive('model.pt')`` (TorchScript archives; the model never runs)."""

from .load import BACKEND, load_archive

__all__ = ["BACKEND", "load_archive"]
