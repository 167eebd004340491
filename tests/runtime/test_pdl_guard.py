"""The launch guard of programmatic dependent launch (runtime/pdl.py), without a GPU: under
debug guards the ABI records how each kernel of `kernels.pdl_chain` accesses its arguments
and what its marks say; a programmatic launch whose mark the kernel launched before it on
the same stream contradicts (it writes what the mark says it does not) is refused with the
guard's GD2 or GD3 words; plain launches, other streams, disjoint arrays, true marks and
kernels compiled without guards pass. The launches themselves are stood in by their facts
(`LaunchFacts`: the kernel, its ABI and each array's byte span); tests/frontends/
test_pdl_gpu.py runs the same refusal through `Launch` on a GPU. And the launch attributes
a programmatic launch gets (`runtime.kernel.launch_attributes`, built without a GPU)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from copy_tools import runtime
from facts.abi import KernelAbi
from facts.errors import ArgumentError
from frontends import kernels
from runtime import pdl

N = 256
BYTES = N * 4


def abis(**options):
    program = runtime.compile(kernels.pdl_chain(N, **options), debug_guards=True)
    return program.kernel("produce").abi, program.kernel("consume").abi


def launch(name: str, abi: KernelAbi, *bases: int) -> pdl.LaunchFacts:
    return pdl.LaunchFacts(name, abi, {i: (b, b + BYTES) for i, b in enumerate(bases)})


X, Y, Z, W = 0x1000, 0x2000, 0x3000, 0x4000


@pytest.fixture(autouse=True)
def fresh_streams():
    pdl.LAST.clear()
    yield
    pdl.LAST.clear()


def test_the_abi_records_accesses_and_marks_under_debug_guards():
    produce, consume = abis(early_read=True, output_mark="read")
    assert produce.accesses == ("read", "write")
    assert produce.marks == ("", "")
    assert consume.accesses == ("read", "read", "write")
    assert consume.marks == ("none", "read", "")
    assert KernelAbi.from_dict(consume.to_dict()) == consume
    plain = runtime.compile(kernels.pdl_chain(N)).kernel("consume").abi
    assert plain.accesses is None
    assert plain.marks is None
    with pytest.raises(ValueError, match="accesses"):
        KernelAbi.from_dict({**consume.to_dict(), "accesses": ["read", "sometimes", "write"]})


def test_a_false_read_mark_is_refused():
    produce, consume = abis(early_read=True, output_mark="read")
    pdl.guard_launch(launch("produce", produce, X, Y), 7, False)
    with pytest.raises(ArgumentError) as caught:
        pdl.guard_launch(launch("consume", consume, W, Y, Z), 7, True)
    message = str(caught.value)
    assert message.startswith("copy-dialect guard GD2: argument 1 of consume, marked ")
    assert "overlaps argument 1 of produce" in message
    assert "which writes it" in message
    # Not issued, so not recorded: the stream's last launch is still produce.
    assert pdl.LAST[7].name == "produce"


def test_a_false_none_mark_on_a_written_argument_is_refused():
    produce, consume = abis()
    # z (written by consume, unmarked) marked "none", and given produce's x, which it reads.
    lying = replace(consume, marks=("none", "", "none"))
    pdl.guard_launch(launch("produce", produce, X, Y), 1, False)
    with pytest.raises(ArgumentError, match="copy-dialect guard GD3: argument 2 of consume"):
        pdl.guard_launch(launch("consume", lying, W, Y, X), 1, True)


@pytest.mark.parametrize(
    "case", ["true marks", "plain launch", "other stream", "unguarded predecessor", "first"]
)
def test_what_passes(case):
    produce, consume = abis(early_read=True, output_mark="read")
    programmatic, stream, bases = True, 3, (W, Y, Z)
    if case == "true marks":
        produce, consume = abis()
    elif case == "plain launch":
        programmatic = False
    elif case == "other stream":
        stream = 4
    elif case == "unguarded predecessor":
        produce = replace(produce, accesses=None, marks=None)
    if case != "first":
        pdl.guard_launch(launch("produce", produce, X, Y), 3, False)
    pdl.guard_launch(launch("consume", consume, *bases), stream, programmatic)
    assert pdl.LAST[stream].name == "consume"


def test_disjoint_arrays_pass():
    produce, consume = abis(early_read=True, output_mark="read")
    pdl.guard_launch(launch("produce", produce, X, Y), 5, False)
    # consume's y is another array than produce's: the mark holds for this pair.
    pdl.guard_launch(launch("consume", consume, W, Y + BYTES, Z), 5, True)


def test_overlap_is_by_byte_span():
    assert pdl.overlaps((0, 16), (15, 32))
    assert not pdl.overlaps((0, 16), (16, 32))


def test_a_launch_without_guards_in_between_is_the_predecessor():
    # Launch.__call__ forgets the stream's last launch for a kernel compiled without debug
    # guards: the guard knows nothing of that predecessor, so it does not check against the
    # one before it.
    produce, consume = abis(early_read=True, output_mark="read")
    pdl.guard_launch(launch("produce", produce, X, Y), 9, False)
    pdl.forget(9)
    pdl.guard_launch(launch("consume", consume, W, Y, Z), 9, True)


def test_launch_attributes():
    """The cuLaunchKernelEx attributes (built without a GPU): programmatic stream
    serialization (id 6, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, value 1)
    for a programmatic launch, after the cluster's dimensions where there is one."""
    from cuda.bindings import driver

    from runtime.kernel import launch_attributes

    ids = driver.CUlaunchAttributeID
    assert launch_attributes((1, 1, 1), False) == []
    (pdl_attribute,) = launch_attributes((1, 1, 1), True)
    assert pdl_attribute.id == ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert pdl_attribute.value.programmaticStreamSerializationAllowed == 1
    cluster, serialization = launch_attributes((2, 1, 1), True)
    assert cluster.id == ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    assert (cluster.value.clusterDim.x, cluster.value.clusterDim.y) == (2, 1)
    assert serialization.id == ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION


def test_launch_config():
    """The CUlaunchConfig of a launch and of the occupancy query (built without a GPU):
    grid, block, dynamic SMEM and the attributes, none for a plain launch."""
    from cuda.bindings import driver

    from runtime.kernel import launch_config

    config = launch_config((4, 2, 1), (384, 1, 1), (2, 1, 1), 1000, True)
    assert (config.gridDimX, config.gridDimY, config.gridDimZ) == (4, 2, 1)
    assert (config.blockDimX, config.blockDimY, config.blockDimZ) == (384, 1, 1)
    assert config.sharedMemBytes == 1000
    ids = driver.CUlaunchAttributeID
    assert config.numAttrs == 2
    assert [a.id for a in config.attrs] == [
        ids.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
    ]
    assert launch_config((4, 1, 1), (128, 1, 1), (1, 1, 1), 0).numAttrs == 0
