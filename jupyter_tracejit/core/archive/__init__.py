"""A saved model read back as a run: ``load('model.pt')`` (TorchScript archives, ``load_archive``) or
``load('model.pt2')`` (exported programs, ``load_exported``); the model never runs."""

from .load import BACKEND, load_archive
from .saved import load

__all__ = ["BACKEND", "load", "load_archive"]
