"""Loading a compiled module and launching its kernels with `cuLaunchKernelEx`."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field
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
from runtime import arrays as arr
from runtime.checks import check_arguments, check_device, check_launch
from runtime.checks import padded_shape as padded_shape  # where callers import it from
from runtime.driver import NoDriverError, call, facts, no_gpu, synchronize
from runtime.errors import ArgumentError
from runtime.interpreting import INTERPRET_ENV, check_same, comparing, interpreting, twin
from runtime.pdl import LAST, LaunchFacts, forget, guard_launch
from runtime.tensor_map import (
    TENSOR_MAP_BYTES,
    check_tensor_map_array,
    map_image,
    small_map_fix,
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
        described = check_arguments(self.abi, self.name, values)
        for tensor_map in self.abi.tensor_maps:
            name = f"argument {tensor_map.arg} of {self.name}"
            check_tensor_map_array(described[tensor_map.arg], tensor_map, name)
        return described

    def check_launch(self, grid: Any, block: Any) -> tuple:
        """(grid, block, cluster) of a launch, checked (`runtime.checks.check_launch`)."""
        return check_launch(self.abi, self.name, grid, block)

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
        mma = self.name in self.program.mma_kernels
        check_same(self.name, values, copies, f"grid {grid}, block {block}", mma=mma)

    def interpret(
        self, *values: Any, grid: tuple[int, ...], block: tuple[int, ...] | None = None
    ) -> None:
        """Runs the kernel on the CPU, on numpy arrays (their results written back), with
        the same checks of the arguments and the launch as on the GPU: the program's
        interpreter (`copy_tools.runtime.compile` gives the program one, from its IR)."""
        hook = self.program.interpreter
        if hook is None:
            raise ArgumentError(
                f"expected a program with its IR to interpret kernel {self.name} "
                f"({INTERPRET_ENV}=1), got one loaded from a cubin: compile the MLIR with "
                "copy_tools.runtime.compile, or unset " + INTERPRET_ENV
            )
        grid3, block3, _ = self.check_launch(grid, block)
        for i, array in enumerate(self.check_arguments(list(values))):
            if isinstance(array, arr.DeviceArray) and array.host is None:
                raise ArgumentError(
                    f"expected argument {i} of {self.name} to be a numpy array: under "
                    f"{INTERPRET_ENV}=1 the kernel runs on the CPU, got a device array"
                )
        hook(self.name, list(values), grid3, block3)

    def max_active_clusters(self, block: tuple[int, ...] | None = None) -> int:
        """How many of the kernel's clusters (blocks, for a kernel without a cluster) the GPU
        runs at once, with the kernel's block and SMEM (`cuOccupancyMaxActiveClusters`): a
        persistent kernel's grid beyond it runs in waves. A cluster's blocks share a GPC,
        and a GPC's SMs need not be a multiple of the cluster size, so fewer clusters than
        SMs / cluster size may fit at once (CUTLASS sizes its persistent grid by this
        query). Needs a GPU (`NoDriverError` otherwise)."""
        from cuda.bindings import driver

        # one cluster as the grid: the launch's shape, checked as a launch's
        _, block3, cluster = self.check_launch(tuple(self.abi.cluster), block)
        try:
            function = self._function()
        except NoDriverError as exc:
            raise no_gpu_again(exc) from None
        if cluster != (1, 1, 1):
            config = launch_config(cluster, block3, cluster, self.abi.smem_bytes)
            return int(call("cuOccupancyMaxActiveClusters", function, config))
        per_sm = call(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            function,
            int(block3[0] * block3[1] * block3[2]),
            self.abi.smem_bytes,
        )
        sms = call(
            "cuDeviceGetAttribute",
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            call("cuCtxGetDevice"),
        )
        return int(per_sm) * int(sms)

    def prepare(
        self,
        *values: Any,
        grid: tuple[int, ...],
        block: tuple[int, ...] | None = None,
        stream: Any = None,
        programmatic: bool | None = None,
    ) -> Launch:
        """Checks everything and encodes the tensor maps once; the returned launch can be
        issued again and again without waiting (for timing, on device arrays).
        `programmatic`: launch with programmatic stream serialization (programmatic
        dependent launch: the kernel may start while the one ahead of it on `stream` still
        runs); None: where the kernel waits for its predecessor (`abi.grid_dependent`). A
        kernel that does not wait must not be launched so: nothing would order its accesses
        after the predecessor's."""
        if programmatic and not self.abi.grid_dependent:
            raise ArgumentError(
                f"expected programmatic=True only for a kernel that waits for its "
                f"predecessor (copy.grid_dependency_wait), got kernel {self.name}, which does "
                "not: add the wait before its first access of the predecessor's output, or "
                "launch it with programmatic=None"
            )
        try:
            return self._prepare(values, grid, block, stream, programmatic)
        except NoDriverError as exc:
            raise no_gpu_again(exc) from None

    def _prepare(
        self,
        values: tuple[Any, ...],
        grid: tuple[int, ...],
        block: tuple[int, ...] | None,
        stream: Any,
        programmatic: bool | None = None,
    ) -> Launch:
        # Everything the caller gave is checked before CUDA is touched: the same error with
        # or without a GPU; then the device.
        grid3, block3, cluster = self.check_launch(grid, block)
        described = self.check_arguments(list(values))
        check_device(self.program.abi.runs_on, self.abi.smem_bytes, facts())
        for a in described:
            if isinstance(a, arr.DeviceArray):
                arr.upload(a)
        serialized = self.abi.grid_dependent if programmatic is None else programmatic
        arguments = self._launch_arguments(described, grid3, block3, cluster, stream, serialized)
        known = None
        if self.abi.accesses is not None:  # compiled with debug guards: the launch guard's
            spans = {
                i: (a.pointer + a.span[0], a.pointer + a.span[1])
                for i, a in enumerate(described)
                if isinstance(a, arr.DeviceArray)
            }
            known = LaunchFacts(self.name, self.abi, spans)
        return Launch(described, *arguments, known, serialized)

    def _launch_arguments(
        self,
        described: list,
        grid3: tuple,
        block3: tuple,
        cluster: tuple,
        stream: Any,
        programmatic: bool = False,
    ) -> tuple[Any, Any, Parameters]:
        from cuda.bindings import driver

        function = self._function()
        # Each parameter's bytes in a buffer of its own, and the array of their addresses
        # that cuLaunchKernelEx takes (kernelParams): packed once here, so that a launch
        # passes one address instead of the binding packing every value again.
        storage: list[Any] = []
        workspaces: list[Workspace] = []
        direct = direct_parameters(self.abi, described)
        fix = small_map_fix(facts())
        for i, param in enumerate(self.params):
            if i in direct:
                value, ctype = direct[i]
                storage.append(ctype(value))
            elif isinstance(param, TensorMapWorkspaceParam):
                # The slots start as the host-encoded map; the kernel may rewrite them.
                initial = map_image(described[param.arg], param.initial_map, fix)
                workspace = Workspace(workspace_image(initial, param))
                workspaces.append(workspace)
                storage.append(ctypes.c_void_p(workspace.pointer))
            elif isinstance(param, TensorMapParam):
                # Passed by value: its 128 bytes.
                storage.append(
                    ctypes.create_string_buffer(
                        map_image(described[param.arg], param, fix), TENSOR_MAP_BYTES
                    )
                )
        config = launch_config(grid3, block3, cluster, self.abi.smem_bytes, programmatic)
        config.hStream = stream if stream is not None else driver.CUstream(0)
        return config, function, Parameters(storage, workspaces)

    def _function(self) -> Any:
        """The kernel's CUfunction, allowed the dynamic SMEM its ABI records."""
        from cuda.bindings import driver

        function = self.program.function(self.name)
        call(
            "cuFuncSetAttribute",
            function,
            driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            self.abi.smem_bytes,
        )
        return function


def launch_config(
    grid3: tuple, block3: tuple, cluster: tuple, smem: int, programmatic: bool = False
) -> Any:
    """The `CUlaunchConfig` of a launch (its stream left to the caller): grid, block, dynamic
    SMEM and `launch_attributes`."""
    from cuda.bindings import driver

    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid3
    config.blockDimX, config.blockDimY, config.blockDimZ = block3
    config.sharedMemBytes = smem
    attributes = launch_attributes(cluster, programmatic)
    if attributes:
        config.attrs = attributes
        config.numAttrs = len(attributes)
    return config


def launch_attributes(cluster: tuple, programmatic: bool) -> list[Any]:
    """The `CUlaunchAttribute`s of a launch: the cluster's dimensions where it has one, and
    programmatic stream serialization where it is a programmatic dependent launch (the
    kernel may start before the one ahead of it on the stream completes, once that one's
    CTAs all ran griddepcontrol.launch_dependents or exited; its griddepcontrol.wait orders
    their memory: CUTLASS's launch with PDL, Triton's `launch_pdl`)."""
    from cuda.bindings import driver

    attributes = []
    if cluster != (1, 1, 1):
        cluster_attribute = driver.CUlaunchAttribute()
        cluster_attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        dims = cluster_attribute.value.clusterDim
        dims.x, dims.y, dims.z = cluster
        attributes.append(cluster_attribute)
    if programmatic:
        serialization = driver.CUlaunchAttribute()
        serialization.id = (
            driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        )
        serialization.value.programmaticStreamSerializationAllowed = 1
        attributes.append(serialization)
    return attributes


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
    facts: LaunchFacts | None = None
    """What the launch guard of programmatic dependent launch reads (runtime.pdl), for a
    kernel compiled with debug guards."""
    programmatic: bool = False
    """Launched with programmatic stream serialization."""

    def __call__(self) -> None:
        if self.facts is not None:
            guard_launch(self.facts, self.config.hStream, self.programmatic)
        elif LAST:
            forget(self.config.hStream)  # a launch the guard knows nothing of
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
    mma_kernels: frozenset[str] = frozenset()
    """The kernels with a tensor-core MMA (wgmma, tcgen05.mma), whose float results the
    interpreter reproduces within the MMA tolerance, not bit for bit
    (`runtime.interpreting`)."""
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
                raise ArgumentError(
                    f"expected a kernel name, the module has {len(kernels)}: {sorted(kernels)}"
                )
            return next(iter(kernels.values()))
        if name not in kernels:
            raise ArgumentError(f"expected one of the kernels {sorted(kernels)}, got {name!r}")
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
        raise ArgumentError(
            f"expected a cubin and its ABI at {path} and {abi_path}: {exc}"
        ) from None
    return Program(cubin, abi)
