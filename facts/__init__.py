"""Facts without xDSL: the target table (`target`), the measured hardware facts (`hardware`,
from `hardware.toml`) and the kernel ABI record (`abi`).

Pure data and plain Python: the dialect, the analysis and the lowering read them, and the
runtime imports nothing else of the project, so a cubin loads and launches with no compiler
installed."""
