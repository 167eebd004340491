"""Frontends: what produces `copy` IR. `frontends.kernels` holds the Python builders of
whole kernels, one module per kernel family."""
