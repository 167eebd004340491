"""The example kernels (*.mlir), shipped as package data: `copy_tools.examples`."""
