"""The user-facing layer: `copy-opt`, `copy-rules`, `copy-demo`, the xDSL registration
(`universe`) and `runtime.compile`. It may import the dialect, the passes and the runtime;
none of them imports it."""
