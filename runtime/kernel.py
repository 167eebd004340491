"""Loading a compiled module and launching its kernels with `cuLaunchKernelEx`."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from math import prod
from pathlib import Path
from typing import Any

import numpy as np

from facts.abi import (
    KernelAbi,
    ModuleAbi,
    Param,
    PointerParam,
    ScalarParam,
    SizeParam,
    TensorMapParam,
    TensorMapWorkspaceParam,
)
from facts.target import TARGETS
from runtime import arrays as arr
from runtime.driver import DeviceFacts, NoDriverError, call, facts, no_gpu, synchronize
from runtime.interpreting import INTERPRET_ENV, check_same, comparing, interpreting, twin
from runtime.tensor_map import (
    TENSOR_MAP_BYTES,
    check_tensor_map_array,
    encode,
    map_bytes,
    workspace_image,
)


def no_gpu_again(exc: NoDriverError) -> NoDriverError:
    """A fresh `exc` for the boundary to raise (no traceback through the runtime's
    internals), its message saying how to check once."""
    return NoDriverError(str(exc)) if "gpu_available" in str(exc) else no_gpu(exc)


def describe_param(param: Param) -> str:
    """A kernel parameter in a few words: `f32[64, 64]`, `i32`, `tensor_map(arg 0, FLOAT32)`."""
    if isinstance(param, PointerParam):
        dims = ", ".join("?" if d < 0 else str(d) for d in param.shape)
        return f"{param.element}[{dims}]" + ("" if param.strides is None else f" {param.layout}")
    if isinstance(param, ScalarParam):
        return param.type
    if isinstance(param, SizeParam):
        return f"size(arg {param.arg}, dim {param.dim})"
    box = "x".join(str(b) for b in param.box)
    return f"{param.kind}(arg {param.arg}, {param.dtype}, box {box})"


SCALAR_TYPES = {
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "index": ctypes.c_int64,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "i1": ctypes.c_bool,
}


def check_device(target: str, smem_bytes: int, facts: DeviceFacts) -> None:
    """The device can run code for `target` with that much shared memory."""
    t = TARGETS[target]
    major, minor = divmod(t.sm, 10)
    have = facts.compute_capability
    if t.suffix in ("a", "f"):
        fits = have == (major, minor) if t.suffix == "a" else have[0] == major
    else:
        fits = have[0] == major and have[1] >= minor
    if not fits:
        raise ValueError(
            f"expected a GPU that runs {target} code (compute capability {major}.{minor}"
            f"{'' if t.suffix == 'a' else ' or a later minor'}), got {facts.name} with "
            f"compute capability {have[0]}.{have[1]}; recompile with --target for it"
        )
    if smem_bytes > facts.max_smem_optin:
        raise ValueError(
            f"expected at most {facts.max_smem_optin} bytes of shared memory per block on "
            f"{facts.name}, got a kernel that needs {smem_bytes}"
        )


def check_layout(array: arr.DeviceArray, param: PointerParam, name: str) -> arr.DeviceArray:
    """The array's strides against the argument's layout, which the kernel addresses it with:
    a row-major argument takes a contiguous array, one of a strided layout
    (`PointerParam.strides`) an array of exactly those strides (a view of a padded array),
    but where the layout's stride is `?` (the array's own, which only a tensor map reads).
    Returned with the layout's strides (they differ only in dims of size 1, which no address
    depends on), so that a tensor map encoded from it describes the layout."""
    if param.strides is None:
        if not array.contiguous:
            raise ValueError(row_major_error(array, name))
        return array
    want = tuple(None if s < 0 else s * array.itemsize for s in param.strides)
    if not array.strides_match(want):
        raise ValueError(strides_error(array, param, name))
    strides = tuple(have if w is None else w for w, have in zip(want, array.strides, strict=True))
    return replace(array, strides=strides)


def row_major_error(array: arr.DeviceArray, name: str) -> str:
    """Why a non-contiguous array does not fit a row-major argument, and the fixes."""
    fix = "np.ascontiguousarray(...)" if array.host is not None else "a contiguous copy"
    elements = element_strides(array)
    layout = ""
    if elements is not None and all(s > 0 for s in elements):
        layout = f", or give the kernel's argument the layout strided<{list(elements)}>"
    return (
        f"expected {name} to be C-contiguous (row-major, the kernel's layout), got strides "
        f"{array.strides} bytes; pass {fix}{layout}"
    )


def strides_error(array: arr.DeviceArray, param: PointerParam, name: str) -> str:
    """Why an array does not fit a strided argument, and the padded array whose view would."""
    want = tuple("?" if s < 0 else s for s in param.strides or ())
    shown = "(" + ", ".join(map(str, want)) + ("," if len(want) == 1 else "") + ")"
    elements = element_strides(array)
    got = f"{elements} elements" if elements is not None else f"{array.strides} bytes"
    padded = padded_shape(array.shape, param.strides or ())
    if padded is None:
        fix = "pass an array of those strides (a view of a larger array)"
    else:
        sliced = zip(array.shape, padded, strict=True)
        view = ", ".join(":" if d == p else f":{d}" for d, p in sliced)
        fix = f"pass a view of a {padded} array, e.g. padded[{view}]"
    return (
        f"expected {name} with strides {shown} elements (its layout {param.layout}), got "
        f"{got}; {fix}"
    )


def element_strides(array: arr.DeviceArray) -> tuple[int, ...] | None:
    """The array's strides in elements, None where one is not a whole number of them."""
    if any(s % array.itemsize for s in array.strides):
        return None
    return tuple(s // array.itemsize for s in array.strides)


def padded_shape(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...] | None:
    """The row-major array of which an array of `shape` at these element strides is the
    leading corner (each stride a multiple of the next, the innermost 1), None where there is
    none."""
    if not strides or strides[-1] != 1 or any(s < 1 for s in strides):
        return None
    pairs = list(zip(strides, strides[1:], strict=False))
    if any(outer % inner for outer, inner in pairs):
        return None
    padded = (shape[0], *(outer // inner for outer, inner in pairs))
    return padded if all(p >= d for p, d in zip(padded, shape, strict=True)) else None


def check_chunk_alignment(array: arr.DeviceArray, param: PointerParam, name: str) -> None:
    """A cp.async copy moves chunks aligned to their size: of a static array the one the
    compiler picked, of a dynamic one the largest that divides the array's address and row
    pitches, picked at run time. The smallest it may move, `align` bytes
    (`PointerParam.align`), must divide them (a device view that starts mid-chunk would
    fault). The kernel computes the pitches from the sizes
    (a contiguous array's strides) or takes its layout's; a host array's device copy is
    allocated aligned."""
    align = param.align
    if param.strides is None:
        pitches = [prod(array.shape[i + 1 :]) * array.itemsize for i in range(len(array.shape) - 1)]
    else:
        pitches = [s * array.itemsize for s in param.strides[:-1]]
    if any(p % align for p in pitches):
        inner = array.shape[-1]
        padded = -(-inner * array.itemsize // align) * align // array.itemsize
        raise ValueError(
            f"expected {name} whose rows are a multiple of {align} bytes apart (the smallest "
            f"chunk the kernel's cp.async copies of it move), got strides of {pitches} bytes "
            f"({inner} elements of {array.dtype} a row); pad the innermost dimension to "
            f"{padded} elements"
        )
    if array.pointer % align:
        raise ValueError(
            f"expected {name} at an address aligned to {align} bytes (the smallest chunk the "
            f"kernel's cp.async copies of it move), got {array.pointer:#x}"
        )


def direct_parameters(
    abi: KernelAbi, described: list[arr.DeviceArray | Any]
) -> dict[int, tuple[Any, Any]]:
    """The value and ctypes type of each parameter the kernel takes straight from the
    caller's checked arguments (`Kernel.check_arguments`), by parameter index: the arrays'
    device addresses, the scalars, and the sizes of the dynamic arrays (`SizeParam`, i64).
    Not the tensor maps, which are encoded from the arrays."""
    found: dict[int, tuple[Any, Any]] = {}
    arguments = iter(described)  # in the order of abi.arguments
    for i, param in enumerate(abi.params):
        if isinstance(param, PointerParam):
            found[i] = (next(arguments).pointer, ctypes.c_void_p)
        elif isinstance(param, ScalarParam):
            found[i] = (next(arguments), SCALAR_TYPES[param.type])
        elif isinstance(param, SizeParam):
            found[i] = (described[param.arg].shape[param.dim], ctypes.c_int64)
    return found


GRID_LIMITS = (2**31 - 1, 65535, 65535)
"""The most blocks a grid has along x, y and z (a larger grid fails with
CUDA_ERROR_INVALID_VALUE, seen on the H200 for grid y = 65536)."""


@dataclass(repr=False)
class Kernel:
    """One kernel of a compiled module, callable on arrays: `kernel(x, y, grid=(64, 64))`."""

    name: str
    abi: KernelAbi
    target: str
    program: Program

    def __repr__(self) -> str:
        """One line: name, target, parameters, launch shape and SMEM (not the cubin)."""
        params = ", ".join(describe_param(p) for p in self.params)
        block = "" if self.abi.block is None else f", block={tuple(self.abi.block)}"
        cluster = tuple(self.abi.cluster)
        clustered = "" if cluster == (1, 1, 1) else f", cluster={cluster}"
        return (
            f"<Kernel {self.name} target={self.target} params=({params}){block}{clustered}, "
            f"smem={self.abi.smem_bytes} bytes>"
        )

    @property
    def params(self) -> tuple[Param, ...]:
        return self.abi.params

    @property
    def arguments(self) -> tuple[PointerParam | ScalarParam, ...]:
        """The parameters the caller passes (pointers and scalars, not tensor maps)."""
        return self.abi.arguments

    def check_arguments(self, values: list[Any]) -> list[arr.DeviceArray | Any]:
        """The caller's arguments against the ABI; arrays are described, not yet uploaded."""
        if len(values) != len(self.arguments):
            raise ValueError(
                f"expected {len(self.arguments)} arguments for kernel {self.name}, "
                f"got {len(values)}"
            )
        described: list[arr.DeviceArray | Any] = []
        for i, (value, param) in enumerate(zip(values, self.arguments, strict=True)):
            name = f"argument {i} of {self.name}"
            if isinstance(param, ScalarParam):
                described.append(value)
                continue
            array = arr.device_array(value, name)
            shape = param.shape
            matches = len(array.shape) == len(shape) and all(
                want < 0 or want == have for want, have in zip(shape, array.shape, strict=True)
            )
            if not matches:
                shown = tuple("?" if d < 0 else d for d in shape)
                raise ValueError(f"expected {name} of shape {shown}, got {array.shape}")
            accepted = arr.accepted_dtypes(param.element)
            if array.dtype not in accepted:
                raise ValueError(
                    f"expected {name} of dtype {' or '.join(sorted(accepted)) or param.element}"
                    f" (the kernel's {param.element}), got {array.dtype}"
                )
            array = check_layout(array, param, name)
            if param.align > 1:
                check_chunk_alignment(array, param, name)
            described.append(array)
        for tensor_map in self.abi.tensor_maps:
            name = f"argument {tensor_map.arg} of {self.name}"
            check_tensor_map_array(described[tensor_map.arg], tensor_map, name)
        return described

    def check_launch(self, grid: tuple[int, ...], block: tuple[int, ...] | None) -> tuple:
        grid3 = (tuple(grid) + (1, 1, 1))[:3]
        fixed = self.abi.block
        if block is None and fixed is None:
            raise ValueError(f"expected a block shape for kernel {self.name} (block=(x, y, z))")
        block3 = (tuple(block or fixed) + (1, 1, 1))[:3]
        if fixed is not None and list(block3) != list(fixed):
            raise ValueError(
                f"expected block {tuple(fixed)} for kernel {self.name} (its "
                f"gpu.known_block_size), got {block3}"
            )
        cluster = self.abi.cluster
        if any(g % c for g, c in zip(grid3, cluster, strict=True)):
            raise ValueError(
                f"expected a grid that is a multiple of the cluster {cluster}, got {grid3}"
            )
        if any(g < 1 for g in grid3) or any(b < 1 for b in block3):
            raise ValueError(f"expected positive grid and block, got {grid3} and {block3}")
        if any(g > limit for g, limit in zip(grid3, GRID_LIMITS, strict=True)):
            raise ValueError(
                f"expected a grid of at most {GRID_LIMITS} blocks per dimension (the CUDA "
                f"limits), got {grid3}; for {self.name}, use larger tiles, put the blocks "
                "along x, or a persistent kernel"
            )
        return grid3, block3, cluster

    def __call__(
        self,
        *values: Any,
        grid: tuple[int, ...],
        block: tuple[int, ...] | None = None,
        stream: Any = None,
    ) -> None:
        """Launches the kernel and waits for it; numpy arrays are copied in and back.
        Without a CUDA driver or GPU, raises `NoDriverError` (`runtime.gpu_available()`).
        Under `COPY_INTERPRET=1`, runs it on the CPU instead (`interpret`); under
        `COPY_INTERPRET=compare`, on both (`compare`)."""
        if interpreting():
            self.interpret(*values, grid=grid, block=block)
            return
        if comparing() and self.program.interpreter is not None:
            self.compare(*values, grid=grid, block=block, stream=stream)
            return
        self.launch(*values, grid=grid, block=block, stream=stream)

    def launch(
        self,
        *values: Any,
        grid: tuple[int, ...],
        block: tuple[int, ...] | None = None,
        stream: Any = None,
    ) -> None:
        """Launches the kernel on the GPU and waits for it."""
        try:
            launch = self.prepare(*values, grid=grid, block=block, stream=stream)
        except NoDriverError as exc:
            raise no_gpu_again(exc) from None
        try:
            launch()
            synchronize()
        finally:
            launch.release()

    def compare(
        self,
        *values: Any,
        grid: tuple[int, ...],
        block: tuple[int, ...] | None = None,
        stream: Any = None,
    ) -> None:
        """Runs the kernel on the GPU, and on the CPU on copies of the same numpy inputs;
        raises `InterpreterMismatch` naming the first array and byte where they differ. A
        call with a device array only launches (the interpreter takes numpy arrays)."""
        if not all(isinstance(v, np.ndarray) or np.isscalar(v) for v in values):
            self.launch(*values, grid=grid, block=block, stream=stream)
            return
        copies = [twin(v) if isinstance(v, np.ndarray) else v for v in values]
        self.launch(*values, grid=grid, block=block, stream=stream)
        self.interpret(*copies, grid=grid, block=block)
        check_same(self.name, values, copies, f"grid {grid}, block {block}")

    def interpret(
        self, *values: Any, grid: tuple[int, ...], block: tuple[int, ...] | None = None
    ) -> None:
        """Runs the kernel on the CPU, on numpy arrays (their results written back), with
        the same checks of the arguments and the launch as on the GPU: the program's
        interpreter (`copy_tools.runtime.compile` gives the program one, from its IR)."""
        hook = self.program.interpreter
        if hook is None:
            raise ValueError(
                f"expected a program with its IR to interpret kernel {self.name} "
                f"({INTERPRET_ENV}=1), got one loaded from a cubin: compile the MLIR with "
                "copy_tools.runtime.compile, or unset " + INTERPRET_ENV
            )
        grid3, block3, _ = self.check_launch(grid, block)
        for i, array in enumerate(self.check_arguments(list(values))):
            if isinstance(array, arr.DeviceArray) and array.host is None:
                raise ValueError(
                    f"expected argument {i} of {self.name} to be a numpy array: under "
                    f"{INTERPRET_ENV}=1 the kernel runs on the CPU, got a device array"
                )
        hook(self.name, list(values), grid3, block3)

    def prepare(
        self,
        *values: Any,
        grid: tuple[int, ...],
        block: tuple[int, ...] | None = None,
        stream: Any = None,
    ) -> Launch:
        """Checks everything and encodes the tensor maps once; the returned launch can be
        issued again and again without waiting (for timing, on device arrays)."""
        try:
            return self._prepare(values, grid, block, stream)
        except NoDriverError as exc:
            raise no_gpu_again(exc) from None

    def _prepare(
        self,
        values: tuple[Any, ...],
        grid: tuple[int, ...],
        block: tuple[int, ...] | None,
        stream: Any,
    ) -> Launch:
        grid3, block3, cluster = self.check_launch(grid, block)
        check_device(self.program.abi.runs_on, self.abi.smem_bytes, facts())
        described = self.check_arguments(list(values))
        for a in described:
            if isinstance(a, arr.DeviceArray):
                arr.upload(a)
        return Launch(described, *self._launch_arguments(described, grid3, block3, cluster, stream))

    def _launch_arguments(
        self, described: list, grid3: tuple, block3: tuple, cluster: tuple, stream: Any
    ) -> tuple[Any, Any, Parameters]:
        from cuda.bindings import driver

        function = self.program.function(self.name)
        smem = self.abi.smem_bytes
        attribute = driver.CUfunction_attribute
        call(
            "cuFuncSetAttribute",
            function,
            attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem,
        )
        # Each parameter's bytes in a buffer of its own, and the array of their addresses
        # that cuLaunchKernelEx takes (kernelParams): packed once here, so that a launch
        # passes one address instead of the binding packing every value again.
        storage: list[Any] = []
        workspaces: list[Workspace] = []
        direct = direct_parameters(self.abi, described)
        for i, param in enumerate(self.params):
            if i in direct:
                value, ctype = direct[i]
                storage.append(ctype(value))
            elif isinstance(param, TensorMapWorkspaceParam):
                # The slots start as the host-encoded map; the kernel may rewrite them.
                initial = map_bytes(encode(described[param.arg], param.initial_map))
                workspace = Workspace(workspace_image(initial, param))
                workspaces.append(workspace)
                storage.append(ctypes.c_void_p(workspace.pointer))
            elif isinstance(param, TensorMapParam):
                # Passed by value: its 128 bytes.
                storage.append(
                    ctypes.create_string_buffer(
                        map_bytes(encode(described[param.arg], param)), TENSOR_MAP_BYTES
                    )
                )
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid3
        config.blockDimX, config.blockDimY, config.blockDimZ = block3
        config.sharedMemBytes = smem
        config.hStream = stream if stream is not None else driver.CUstream(0)
        if cluster != (1, 1, 1):
            cluster_attribute = driver.CUlaunchAttribute()
            cluster_attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            dims = cluster_attribute.value.clusterDim
            dims.x, dims.y, dims.z = cluster
            config.attrs = [cluster_attribute]
            config.numAttrs = 1
        return config, function, Parameters(storage, workspaces)


@dataclass
class Parameters:
    """A launch's kernel parameters, packed: each one's bytes in a ctypes object of its own
    (`storage`, in the kernel's parameter order; they live as long as the launch), the array
    of their addresses and the tensor-map workspaces."""

    storage: list[Any]
    workspaces: list[Workspace] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.addresses = (ctypes.c_void_p * max(1, len(self.storage)))(
            *(ctypes.addressof(value) for value in self.storage)
        )

    @property
    def address(self) -> int:
        """What cuLaunchKernelEx takes as kernelParams: the address of the addresses."""
        return ctypes.addressof(self.addresses)


@dataclass
class Launch:
    """A checked launch, ready to issue: `launch()` (asynchronous), then `release()`."""

    arrays: list
    config: Any
    function: Any
    parameters: Parameters

    def __call__(self) -> None:
        for workspace in self.parameters.workspaces:
            workspace.reset(self.config.hStream)  # each launch starts from the host's map
        call("cuLaunchKernelEx", self.config, self.function, self.parameters.address, 0)

    def release(self) -> None:
        """Copies host arrays back (after the launches completed) and frees their copies
        and the tensor-map workspaces."""
        synchronize()
        for a in self.arrays:
            if isinstance(a, arr.DeviceArray):
                a.release()
        for workspace in self.parameters.workspaces:
            workspace.release()


@dataclass
class Workspace:
    """The device memory of a tensor-map workspace (`TensorMapWorkspaceParam`): its slots,
    each filled with the host-encoded map before every launch (a launch rewrites them)."""

    image: bytes
    pointer: int = 0

    def __post_init__(self) -> None:
        # A host buffer that lives as long as the workspace: the copies in are asynchronous.
        self.host = ctypes.create_string_buffer(self.image, len(self.image))
        self.pointer = int(call("cuMemAlloc", len(self.image)))

    def reset(self, stream: Any) -> None:
        """Copies the image in, in stream order (after the launches before it)."""
        call(
            "cuMemcpyHtoDAsync", self.pointer, ctypes.addressof(self.host), len(self.image),
            stream,
        )  # fmt: skip

    def release(self) -> None:
        if self.pointer:
            call("cuMemFree", self.pointer)
            self.pointer = 0


@dataclass(repr=False)
class Program:
    """A compiled module: its cubin and the ABI of its kernels."""

    cubin: bytes
    abi: ModuleAbi
    interpreter: Callable[[str, list[Any], tuple[int, ...], tuple[int, ...]], None] | None = None
    """Runs a kernel (name, arguments, grid, block) on the CPU from the program's IR: what a
    call does under COPY_INTERPRET=1 (`copy_tools.runtime.compile` sets it; a program loaded
    from a cubin has none)."""
    _module: Any = None
    _functions: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line: target, kernels and the cubin's size (not its bytes)."""
        arch = "" if self.abi.arch is None else f" arch={self.abi.arch}"
        return (
            f"<Program target={self.target}{arch} kernels={sorted(self.abi.kernels)} "
            f"cubin={len(self.cubin)} bytes>"
        )

    @property
    def target(self) -> str:
        return self.abi.target

    @property
    def kernels(self) -> dict[str, Kernel]:
        return {
            name: Kernel(name, facts, self.target, self) for name, facts in self.abi.kernels.items()
        }

    def kernel(self, name: str | None = None) -> Kernel:
        kernels = self.kernels
        if name is None:
            if len(kernels) != 1:
                raise ValueError(
                    f"expected a kernel name, the module has {len(kernels)}: {sorted(kernels)}"
                )
            return next(iter(kernels.values()))
        if name not in kernels:
            raise ValueError(f"expected one of the kernels {sorted(kernels)}, got {name!r}")
        return kernels[name]

    def __call__(self, *values: Any, **launch: Any) -> None:
        self.kernel()(*values, **launch)

    def function(self, name: str) -> Any:
        if self._module is None:
            facts()
            self._module = call("cuModuleLoadData", self.cubin)
        if name not in self._functions:
            self._functions[name] = call("cuModuleGetFunction", self._module, name.encode())
        return self._functions[name]


def load(path: str | Path) -> Program:
    """A cubin written by `copy-opt -t cubin -o PATH`, with the ABI in `PATH.json`."""
    path = Path(path)
    abi_path = Path(f"{path}.json")
    try:
        cubin = path.read_bytes()
        abi = ModuleAbi.from_json(abi_path.read_text())
    except OSError as exc:
        raise ValueError(f"expected a cubin and its ABI at {path} and {abi_path}: {exc}") from None
    return Program(cubin, abi)
