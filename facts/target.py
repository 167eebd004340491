"""The target model: the one table of compilation targets, their GPU features and codegen.

A target is named as in PTX (`sm_80`, `sm_90a`, `sm_100a`, ...). The IR carries it as
`#copy.target<"sm_90a">` in a `copy.target` attribute on an enclosing op (usually the
module); target-dependent verifier rules are checked whenever it is there.

Feature gates (first target with the feature):
- cp.async: sm_80.
- TMA (`cp.async.bulk.tensor`), mbarrier tx-count (`expect_tx`, `try_wait`), clusters,
  bulk groups, `fence.proxy.async`: sm_90.
- `.multicast::cluster`: the arch-specific targets sm_90a, sm_100a/f, sm_103a, sm_110a/f (PTX
  ISA; the CCCL tables changed it "from SM_90 to SM_90a").
- `griddepcontrol` (programmatic dependent launch): sm_90 (PTX ISA 7.8).
- `tensormap.replace`, `fence.proxy.tensormap::generic` (tensor maps rewritten in the
  kernel): PTX ISA 8.3 on the arch-specific targets sm_90a, sm_100a/f, sm_103a, sm_110a/f.
- tcgen05 / TMEM, `.cta_group::2`: the datacenter Blackwell family sm_100a/f, sm_103a and
  Jetson Thor's sm_110a/f. Consumer Blackwell (sm_120) has neither (triton#9852).
  `tcgen05.shift`: sm_100a, sm_103a, sm_110a; `tcgen05.ld.red`: sm_103a, sm_110a/f;
  `tcgen05.mma`'s scale-input-d: sm_100a/f, sm_103a (not Thor).
- `ldmatrix` (m8n8 .b16): every target of the table (PTX: sm_75); `stmatrix` (m8n8 .b16):
  sm_90. The 8-bit forms (`ldmatrix.m16n16 .b8`, its `.b8x16.b6x16_p32`/`.b4x16_p64`
  decompressing sources, `stmatrix.m16n8 .b8`): the arch- and family-specific Blackwell
  targets sm_100a/f, sm_103a, sm_110a/f, sm_120a (PTX ISA 8.6; LLVM 22 cannot select them
  for sm_90a or sm_120).

docs/targets.md gives each gate's PTX ISA note and what ptxas 13.0 says for sm_110a/f
(tests/facts/test_sm110_matrix.py asks ptxas again).

- Blackwell tensor maps: the packed map types (`16U4_ALIGN8B`, `16U4_ALIGN16B`,
  `16U6_ALIGN16B`) and the `128B_ATOM_*` swizzles (cuda.h 12.8, with sm_100): every target of
  compute capability 10.0 or more.
The `Target.has_*` properties decide each gate; `FEATURES` names the gates as users know
them, and `feature_message` is the one message for a target that lacks one (the verifiers
and the builders raise it).

Codegen (the backend, passes/backend.py): LLVM's NVPTX cpu is the target's name and its
features select the PTX ISA version. Every pair was compiled by llvmlite 0.50 and its PTX
linked by nvJitLink 13.5 for the same arch (tests/passes/test_backend.py does it again). LLVM 22
knows PTX up to 9.0 (`+ptx90`); it ignores `+ptx91` and above with a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One compilation target and its feature set."""

    name: str
    sm: int
    """Compute capability as major*10 + minor (90 for sm_90a)."""
    suffix: str
    """'' (portable), 'a' (arch-specific) or 'f' (family-specific)."""
    max_smem_bytes: int
    """Largest shared memory a block can opt into (cudaDevAttrMaxSharedMemoryPerBlockOptin)."""
    ptx_isa: int
    """The PTX ISA version the backend emits, as major*10 + minor (80 for PTX 8.0)."""

    @property
    def llvm_cpu(self) -> str:
        """LLVM's NVPTX cpu (the `.target` of the PTX): the target's name."""
        return self.name

    @property
    def llvm_features(self) -> str:
        """LLVM's NVPTX features: the PTX ISA version (`+ptx80`)."""
        return f"+ptx{self.ptx_isa}"

    @property
    def has_cp_async(self) -> bool:
        return self.sm >= 80

    @property
    def has_tma(self) -> bool:
        return self.sm >= 90

    @property
    def has_clusters(self) -> bool:
        return self.sm >= 90

    @property
    def has_multicast(self) -> bool:
        return self.has_tma and self.suffix in ("a", "f") and self.sm in (90, 100, 103, 110)

    @property
    def has_cta_bulk_destination(self) -> bool:
        """The `.shared::cta` destination of the TMA and bulk loads (PTX ISA 8.6): where a
        load writes only its own CTA's SMEM (not multicast, not leader-tracked), the
        lowering names that window rather than `.shared::cluster` (jax#40721)."""
        return self.has_tma and self.ptx_isa >= 86

    @property
    def has_tensormap_replace(self) -> bool:
        """`tensormap.replace` and `fence.proxy.tensormap::generic` (a tensor map rewritten
        in the kernel): PTX ISA 8.3, the arch-specific targets sm_90a, sm_100a/f, sm_103a,
        sm_110a/f (ptxas rejects it for sm_90 and sm_110)."""
        return self.has_multicast and self.ptx_isa >= 83

    @property
    def has_griddepcontrol(self) -> bool:
        """`griddepcontrol.wait` and `griddepcontrol.launch_dependents` (programmatic
        dependent launch): PTX ISA 7.8, sm_90 and newer."""
        return self.sm >= 90

    @property
    def has_setmaxnreg(self) -> bool:
        """`setmaxnreg` (register reallocation between warpgroups): arch- and family-
        specific targets from sm_90a on."""
        return self.sm >= 90 and self.suffix in ("a", "f")

    @property
    def has_elect_sync(self) -> bool:
        return self.sm >= 90

    @property
    def has_tcgen05(self) -> bool:
        """tcgen05 and TMEM: sm_100a/f, sm_103a, sm_110a/f (ptxas 13.0 refuses
        tcgen05.alloc for sm_110 and sm_120a)."""
        return self.sm in (100, 103, 110) and self.suffix in ("a", "f")

    @property
    def has_tcgen05_shift(self) -> bool:
        """`tcgen05.shift`: the arch-specific sm_100a, sm_103a and sm_110a only of these
        targets (PTX ISA 8.6, tcgen05.shift's Target ISA Notes; ptxas 13 rejects it for
        sm_100f and sm_110f)."""
        return self.sm in (100, 103, 110) and self.suffix == "a"

    @property
    def has_tmem_load_reduce(self) -> bool:
        """`tcgen05.ld.red` (fused load-reduce): sm_103a, sm_110a and sm_110f of these
        targets (ptxas 13.0 rejects it for sm_100a/f and sm_120a)."""
        return self.sm in (103, 110) and self.suffix in ("a", "f")

    @property
    def has_mma_scale_input_d(self) -> bool:
        """`tcgen05.mma`'s scale-input-d immediate: sm_100a/f and sm_103a of these targets
        (CCCL's cuda::ptx: SM_100a, SM_100f, SM_103a, SM_103f). ptxas 13.0 refuses it for
        sm_110a/f ("Feature 'argument scale-inp-d-imm' not supported") and LLVM 22 cannot
        select it there. The kernel rule MI8 (analysis.kernel.mma) checks an
        `nvvm.tcgen05.mma` with a scale against the target."""
        return self.has_tcgen05 and self.sm in (100, 103)

    @property
    def has_stmatrix(self) -> bool:
        return self.sm >= 90

    @property
    def has_matrix_b8(self) -> bool:
        """The 8-bit ldmatrix/stmatrix forms (m16n16 / m16n8 `.b8`): sm_100a/f, sm_103a,
        sm_110a/f, sm_120a."""
        return self.sm >= 100 and self.suffix in ("a", "f")

    def assembles_for(self, arch: Target) -> bool:
        """Whether PTX written for this target can be assembled into `arch`'s SASS (CUDA's
        compute_80 -> sm_90 path: nvJitLink's `-arch`): portable PTX for any later GPU,
        family-specific PTX for a later GPU of its family, arch-specific PTX for its own
        GPU only."""
        if self.suffix == "a":
            return arch.name == self.name
        if self.suffix == "f":
            return arch.sm // 10 == self.sm // 10 and arch.sm >= self.sm
        return arch.sm >= self.sm

    @property
    def default_implementation(self) -> str:
        """The copy implementation chosen when the IR leaves it open (Mosaic GPU's rule)."""
        return "tma" if self.has_tma else "cp_async"


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        # Ampere and Ada take PTX ISA 8.0 (their minimum is 7.0-8.0): `::cta` qualifiers
        # (7.8) and the PTX that was run on an H200 (docs/hardware.md) need it. Hopper takes
        # 8.6: the `.shared::cta` destinations of the bulk and TMA loads are 8.6 (LLVM
        # aborts on them below it), tensormap.replace and fence.proxy.tensormap 8.3,
        # st.async and red.async 8.1 (ptxas rejects them under 8.0).
        Target("sm_80", 80, "", 166_912, 80),
        Target("sm_86", 86, "", 101_376, 80),
        Target("sm_89", 89, "", 101_376, 80),
        Target("sm_90", 90, "", 232_448, 86),
        Target("sm_90a", 90, "a", 232_448, 86),
        # Blackwell: sm_100f and sm_103a need PTX 8.8 (LLVM aborts below it), sm_100a 8.6
        # and sm_120/sm_120a 8.7; all take 8.8, so that inline tcgen05 PTX of 8.7/8.8
        # assembles.
        Target("sm_100a", 100, "a", 232_448, 88),
        Target("sm_100f", 100, "f", 232_448, 88),
        Target("sm_103a", 103, "a", 232_448, 88),
        # Jetson Thor (sm_101 before CUDA 13): LLVM and ptxas need PTX 9.0 for sm_110a/f.
        # SMEM: sm_100's 227 KiB, not measured (docs/targets.md gives the source).
        Target("sm_110a", 110, "a", 232_448, 90),
        Target("sm_110f", 110, "f", 232_448, 90),
        Target("sm_120", 120, "", 101_376, 88),
        Target("sm_120a", 120, "a", 101_376, 88),
    )
}


@dataclass(frozen=True)
class Feature:
    """A GPU feature some targets lack, as the messages name it: the name users know it by,
    the `Target.has_*` property that decides it (the one definition; `has` reads it), and
    why a target lacks it where the name alone does not say (`reasons`: a GPU generation,
    sm // 10, and the words)."""

    name: str
    has: Callable[[Target], bool]
    reasons: tuple[tuple[int, str], ...] = ()

    @property
    def targets(self) -> tuple[str, ...]:
        """The targets that have it, in the order of TARGETS."""
        return tuple(name for name, t in TARGETS.items() if self.has(t))

    @property
    def listed(self) -> str:
        """Its targets as the messages list them: `sm_90a, sm_100a, sm_100f, sm_103a`."""
        return ", ".join(self.targets)

    def reason(self, target: Target) -> str:
        """Why `target` lacks it, as the end of a message (` (consumer Blackwell has no
        TMEM)`); '' where the feature's name says enough."""
        return next((f" ({why})" for gen, why in self.reasons if target.sm // 10 == gen), "")


# The features a target may lack, one entry for each name a message gives it. Several
# share a predicate (TMA, bulk copies, bulk groups, transaction counts, try_wait,
# fence.proxy.async all came with sm_90) but not a name: each message names the feature
# the op uses.
TMA = Feature("TMA", lambda t: t.has_tma)
BULK_COPIES = Feature("cp.async.bulk", lambda t: t.has_tma)
BULK_GROUPS = Feature("bulk groups", lambda t: t.has_tma)
FENCE_PROXY_ASYNC = Feature("fence.proxy.async", lambda t: t.has_tma)
TX_COUNTS = Feature("mbarrier transaction counts", lambda t: t.has_tma)
ARRIVE_COUNTS = Feature("mbarrier arrival counts", lambda t: t.has_tma)
TRY_WAIT = Feature("mbarrier.try_wait", lambda t: t.has_tma)
CLUSTERS = Feature("clusters", lambda t: t.has_clusters)
DSMEM = Feature("distributed shared memory", lambda t: t.has_clusters)
MULTICAST = Feature(".multicast::cluster", lambda t: t.has_multicast)
TENSORMAP_REPLACE = Feature("tensormap.replace", lambda t: t.has_tensormap_replace)
SETMAXNREG = Feature("setmaxnreg", lambda t: t.has_setmaxnreg)
GRID_DEPENDENCY = Feature("griddepcontrol", lambda t: t.has_griddepcontrol)
TCGEN05 = Feature(
    "tcgen05 (TMEM)", lambda t: t.has_tcgen05, ((12, "consumer Blackwell has no TMEM"),)
)
CTA_PAIR = Feature(".cta_group::2", lambda t: t.has_tcgen05)
TMEM_LOAD_REDUCE = Feature("tcgen05.ld.red", lambda t: t.has_tmem_load_reduce)
TCGEN05_SHIFT = Feature("tcgen05.shift", lambda t: t.has_tcgen05_shift)
MMA_SCALE_INPUT_D = Feature("tcgen05.mma scale-input-d", lambda t: t.has_mma_scale_input_d)
STMATRIX = Feature("stmatrix", lambda t: t.has_stmatrix)
MATRIX_B8 = Feature("8-bit ldmatrix/stmatrix", lambda t: t.has_matrix_b8)
BLACKWELL_TENSOR_MAPS = Feature(
    "Blackwell tensor maps (packed 4- and 6-bit types, 128B_ATOM swizzles)", lambda t: t.sm >= 100
)

FEATURES: tuple[Feature, ...] = (
    TMA, BULK_COPIES, BULK_GROUPS, FENCE_PROXY_ASYNC, TX_COUNTS, ARRIVE_COUNTS, TRY_WAIT,
    CLUSTERS, DSMEM, MULTICAST, TENSORMAP_REPLACE, SETMAXNREG, GRID_DEPENDENCY, TCGEN05,
    CTA_PAIR, TMEM_LOAD_REDUCE, TCGEN05_SHIFT, MMA_SCALE_INPUT_D, STMATRIX, MATRIX_B8,
    BLACKWELL_TENSOR_MAPS,
)  # fmt: skip


def feature_message(op: str, feature: Feature, target: Target, uses: str = "") -> str:
    """The one message for a target that lacks `feature`, wherever it is found (a verifier,
    a builder): `'copy.prefetch' needs a target with TMA (sm_90, ..., sm_120a), but the
    target is sm_80`. `uses` says what of the op needs the feature where that is not the op
    itself: `with collective`, `with impl tma`."""
    needs = f"{uses} needs" if uses else "needs"
    return (
        f"'{op}' {needs} a target with {feature.name} ({feature.listed}), but the target is "
        f"{target.name}{feature.reason(target)}"
    )


class UnknownTarget(ValueError):
    """A name that is no target of the table: the one error for it, wherever a target is
    named (the IR's `#copy.target`, copy-opt's `--target` and `--arch`, a pass's `target`
    option, a builder's `target=`, the backend)."""

    def __init__(self, name: str, what: str = "target"):
        self.name = name
        super().__init__(f"unknown {what} '{name}': expected one of {', '.join(TARGETS)}")


def target_named(name: str, what: str = "target") -> Target:
    """The target `name` names (`what` says what names it: "target", "GPU arch"); an
    `UnknownTarget` for a name that is none."""
    target = TARGETS.get(name)
    if target is None:
        raise UnknownTarget(name, what)
    return target


def check_arch(target: Target, arch: Target) -> None:
    """A ValueError (expected, got, fix) unless PTX for `target` assembles for `arch`'s GPU."""
    if target.assembles_for(arch):
        return
    fits = ", ".join(name for name, t in TARGETS.items() if target.assembles_for(t))
    why = (
        "arch-specific PTX assembles for its own GPU only"
        if target.suffix == "a"
        else "PTX assembles for its own GPU or a later one"
    )
    raise ValueError(
        f"expected an arch that runs {target.name} PTX ({fits}), got '{arch.name}': {why}; "
        f"compile the IR for {arch.name} itself (after copy-legalize{{target={arch.name}}} "
        f"where it uses what {arch.name} lacks)"
    )
