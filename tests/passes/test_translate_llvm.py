"""The LLVM IR translation (passes/translate_llvm.py): its text, then llvmlite, PTX and cubin.

The checks are lit-style: `check(text, ...)` finds each expected line in order, like a run
of FileCheck `CHECK`s. Until copy-opt has `-t llvm`, these stand in for a lit test.
"""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    ModuleOp,
    i1,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from passes import backend
from passes.llvm_ir import IREmitter
from passes.translate_llvm import (
    NVPTX_DATA_LAYOUT,
    TranslationError,
    translate_module,
)
from passes.translate_llvm.spelling import float_literal as _float_literal

# --- ops that translate themselves, as the nvvm ops do --------------------------------------


@irdl_op_definition
class TidOp(IRDLOperation):
    """`testir.tid` -> a call of the tid.x intrinsic."""

    name = "testir.tid"
    res = result_def(i32)

    def to_llvm_ir(self, emitter: IREmitter) -> None:
        emitter.declare("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
        name = emitter.fresh()
        emitter.emit(f"{name} = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
        emitter.bind(self.res, name)


@irdl_op_definition
class ToClusterOp(IRDLOperation):
    """`testir.to_cluster` -> addrspacecast 3 -> 7 (xDSL's llvm dialect has no addrspacecast)."""

    name = "testir.to_cluster"
    ptr = operand_def(LLVMPointerType)
    res = result_def(LLVMPointerType)

    def to_llvm_ir(self, emitter: IREmitter) -> None:
        name = emitter.fresh()
        emitter.emit(
            f"{name} = addrspacecast {emitter.typed(self.ptr)} to {emitter.type(self.res.type)}"
        )
        emitter.bind(self.res, name)


@irdl_op_definition
class SpinOp(IRDLOperation):
    """`testir.spin` -> a loop of its own blocks around an inline-asm test; result: the flag."""

    name = "testir.spin"
    bar = operand_def(LLVMPointerType)
    res = result_def(i1)

    def to_llvm_ir(self, emitter: IREmitter) -> None:
        loop, done, flag = emitter.fresh(), emitter.fresh(), emitter.fresh()
        emitter.emit(f"br label {loop}")
        emitter.emit(f"{loop[1:]}:")
        emitter.emit(
            f'{flag} = call i1 asm sideeffect "{{ .reg .pred p; mbarrier.test_wait.parity.shared'
            f'::cta.b64 p, [$1], 0; selp.u32 $0, 1, 0, p; }}", "=r,l"({emitter.typed(self.bar)})'
        )
        emitter.emit(f"br i1 {flag}, label {done}, label {loop}")
        emitter.emit(f"{done[1:]}:")
        emitter.bind(self.res, flag)


@irdl_op_definition
class ForgetfulOp(IRDLOperation):
    """`testir.forgetful` prints nothing and never binds its result."""

    name = "testir.forgetful"
    res = result_def(i32)

    def to_llvm_ir(self, emitter: IREmitter) -> None:
        pass


TestIR = Dialect("testir", [TidOp, ToClusterOp, SpinOp, ForgetfulOp])


@pytest.fixture
def ir_ctx(ctx: Context) -> Context:
    ctx.load_dialect(TestIR)
    return ctx


def parse(ctx: Context, text: str) -> ModuleOp:
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def translate(ctx: Context, text: str) -> str:
    return translate_module(parse(ctx, text))


def check(text: str, *expected: str) -> None:
    """Each expected string occurs in `text`, in this order (FileCheck `CHECK` lines)."""
    position = 0
    for item in expected:
        found = text.find(item, position)
        assert found >= 0, f"expected after offset {position}:\n  {item}\nin:\n{text}"
        position = found + len(item)


def compile_all(ir: str, targets: tuple[str, ...]) -> dict[str, str]:
    """PTX per target; each is also linked to a cubin by nvJitLink."""
    ptx = {}
    for target in targets:
        ptx[target] = backend.compile_ptx(ir, target)
        assert backend.compile_cubin(ptx[target], target)[:4] == b"\x7fELF"
    return ptx


# --- every op kind ----------------------------------------------------------------------------

ALL_OPS = """
builtin.module {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32, alignment = 1024 : i64}
    : !llvm.array<16384 x i8>
  llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global external @dyn() {addr_space = 3 : i32, alignment = 16 : i64}
    : !llvm.array<0 x i8>
  llvm.mlir.global internal constant @table(dense<[1, 2, 3, 4]> : tensor<4xi32>)
    {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<4 x i32>
  llvm.mlir.global private constant @msg("hi\\n\\00") {addr_space = 4 : i32} : !llvm.array<4 x i8>
  llvm.func internal @helper(%x: i32) -> i32 {
    %y = llvm.mul %x, %x : i32
    llvm.return %y : i32
  }
  llvm.func @trap() {
    llvm.call_intrinsic "llvm.trap"() : () -> ()
    llvm.unreachable
  }
  llvm.func @all_ops(
      %tmap: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>,
                        nvvm.grid_constant},
      %out: !llvm.ptr<1> {llvm.noalias}, %n: i32, %h: f16, %d: f64)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256>, copy.abi = {note = "skipped"}} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c7 = llvm.mlir.constant(7 : i64) : i64
    %f = llvm.mlir.constant(0.1 : f32) : f32
    %vec = llvm.mlir.constant(dense<[1, 2, 3, 4]> : vector<4xi32>) : vector<4xi32>
    %undef = llvm.mlir.undef : i32
    %null = llvm.mlir.zero : !llvm.ptr
    %smem = llvm.mlir.addressof @smem : !llvm.ptr<3>
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %table = llvm.mlir.addressof @table : !llvm.ptr<1>
    %add = llvm.add %n, %c0 overflow<nsw, nuw> : i32
    %sub = llvm.sub %add, %n : i32
    %mul = llvm.mul %sub, %n overflow<nsw> : i32
    %udiv = llvm.udiv exact %mul, %n : i32
    %sdiv = llvm.sdiv %udiv, %n : i32
    %urem = llvm.urem %sdiv, %n : i32
    %srem = llvm.srem %urem, %n : i32
    %and = llvm.and %srem, %n : i32
    %or = llvm.or disjoint %and, %n : i32
    %xor = llvm.xor %or, %n : i32
    %shl = llvm.shl %xor, %n : i32
    %lshr = llvm.lshr %shl, %n : i32
    %ashr = llvm.ashr exact %lshr, %n : i32
    %fadd = llvm.fadd %f, %f {fastmathFlags = #llvm.fastmath<fast>} : f32
    %fsub = llvm.fsub %fadd, %f {fastmathFlags = #llvm.fastmath<nnan, ninf>} : f32
    %fmul = llvm.fmul %fsub, %f : f32
    %fdiv = llvm.fdiv %fmul, %f : f32
    %frem = llvm.frem %fdiv, %f : f32
    %fneg = llvm.fneg %frem : f32
    %fabs = llvm.intr.fabs(%fneg) : (f32) -> f32
    %fma = llvm.intr.fma(%fabs, %f, %f) : (f32, f32, f32) -> f32
    %lt = llvm.icmp "ult" %ashr, %n : i32
    %olt = llvm.fcmp "olt" %fma, %f : f32
    %both = llvm.and %lt, %olt : i1
    %sel = llvm.select %both, %ashr, %n : i1, i32
    %wide = llvm.zext %sel : i32 to i64
    %swide = llvm.sext %sel : i32 to i64
    %narrow = llvm.trunc %swide : i64 to i16
    %fwide = llvm.fpext %h : f16 to f32
    %fnarrow = llvm.fptrunc %d : f64 to f32
    %fromint = llvm.sitofp %n : i32 to f32
    %bits = llvm.bitcast %fromint : f32 to i32
    %addr = llvm.ptrtoint %out : !llvm.ptr<1> to i64
    %back = llvm.inttoptr %addr : i64 to !llvm.ptr<1>
    %elt = llvm.getelementptr %back[%wide] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
    %row = llvm.getelementptr inbounds %smem[0, 128]
      : (!llvm.ptr<3>) -> !llvm.ptr<3>, !llvm.array<16384 x i8>
    %t2 = llvm.getelementptr %table[%c7] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
    %tv = llvm.load %t2 {alignment = 4 : i64} : !llvm.ptr<1> -> i32
    llvm.store %bits, %elt {alignment = 4 : i64} : i32, !llvm.ptr<1>
    llvm.store volatile %narrow, %row {alignment = 2 : i64} : i16, !llvm.ptr<3>
    llvm.store %tv, %elt {alignment = 4 : i64, nontemporal} : i32, !llvm.ptr<1>
    %atom = llvm.load %elt atomic acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
    %ins = llvm.insertelement %atom, %vec[%c0 : i32] : vector<4xi32>
    %shuf = llvm.shufflevector %ins, %vec [0, 5, -1, 3] : vector<4xi32>
    %pair = llvm.inline_asm has_side_effects "mov.u32 $0, $2; mov.u32 $1, %tid.x;", "=r,=r,f"
      %fnarrow : (f32) -> !llvm.struct<(i32, i32)>
    %first = llvm.extractvalue %pair[0] : !llvm.struct<(i32, i32)>
    %u = llvm.mlir.undef : !llvm.struct<(i32, i32)>
    %pair2 = llvm.insertvalue %first, %u[1] : !llvm.struct<(i32, i32)>
    %tid = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
    %sq = llvm.call @helper(%tid) : (i32) -> i32
    %slot = llvm.alloca %c7 x i32 {alignment = 16 : i64} : (i64) -> !llvm.ptr
    llvm.store %sq, %slot {alignment = 4 : i64} : i32, !llvm.ptr
    llvm.inline_asm has_side_effects "st.shared.u32 [$0], $1;", "l,r" %bar, %undef
      : (!llvm.ptr<3>, i32) -> ()
    %tma = llvm.ptrtoint %tmap : !llvm.ptr to i64
    llvm.store %tma, %elt {alignment = 8 : i64} : i64, !llvm.ptr<1>
    %is7 = llvm.icmp "eq" %addr, %c7 : i64
    llvm.cond_br %is7, ^loop(%c0 : i32), ^exit
  ^loop(%i: i32):
    %next = llvm.add %i, %sq : i32
    %done = llvm.icmp "sge" %next, %n : i32
    llvm.cond_br %done, ^exit, ^loop(%next : i32)
  ^exit:
    llvm.return
  }
}
"""


def test_every_op_kind_translates_and_compiles(ctx: Context):
    ir = translate(ctx, ALL_OPS)
    check(
        ir,
        f'target datalayout = "{NVPTX_DATA_LAYOUT}"',
        'target triple = "nvptx64-nvidia-cuda"',
        "@smem = internal addrspace(3) global [16384 x i8] undef, align 1024",
        "@bar = internal addrspace(3) global i64 undef, align 8",
        # No initializer: an external declaration (dynamic shared memory).
        "@dyn = external addrspace(3) global [0 x i8], align 16",
        "@table = internal addrspace(1) constant [4 x i32] [i32 1, i32 2, i32 3, i32 4], align 16",
        '@msg = private addrspace(4) constant [4 x i8] c"hi\\0A\\00"',
        "define internal i32 @helper(i32 %x) {",
        "  %y = mul i32 %x, %x",
        "  ret i32 %y",
        "define void @trap() {",
        "  call void @llvm.trap()",
        "  unreachable",
        "define ptx_kernel void @all_ops(ptr byval([128 x i8]) align 64 "
        '"nvvm.grid_constant" %tmap, ptr addrspace(1) noalias %out, i32 %n, half %h, '
        "double %d) #0 {",
        "bb0:",
        # Constants are printed inline.
        "  %add = add nuw nsw i32 %n, 0",
        "  %sub = sub i32 %add, %n",
        "  %mul = mul nsw i32 %sub, %n",
        "  %udiv = udiv exact i32 %mul, %n",
        "  %sdiv = sdiv i32 %udiv, %n",
        "  %urem = urem i32 %sdiv, %n",
        "  %srem = srem i32 %urem, %n",
        "  %and = and i32 %srem, %n",
        "  %or = or disjoint i32 %and, %n",
        "  %xor = xor i32 %or, %n",
        "  %shl = shl i32 %xor, %n",
        "  %lshr = lshr i32 %shl, %n",
        "  %ashr = ashr exact i32 %lshr, %n",
        # 0.1 as a float, spelled exactly as LLVM does: the double of the rounded single.
        "  %fadd = fadd fast float 0x3FB99999A0000000, 0x3FB99999A0000000",
        "  %fsub = fsub nnan ninf float %fadd, 0x3FB99999A0000000",
        "  %fmul = fmul float %fsub,",
        "  %fdiv = fdiv float %fmul,",
        "  %frem = frem float %fdiv,",
        "  %fneg = fneg float %frem",
        "  %fabs = call float @llvm.fabs.f32(float %fneg)",
        "  %fma = call float @llvm.fma.f32(float %fabs, float 0x3FB99999A0000000,",
        "  %lt = icmp ult i32 %ashr, %n",
        "  %olt = fcmp olt float %fma, 0x3FB99999A0000000",
        "  %both = and i1 %lt, %olt",
        "  %sel = select i1 %both, i32 %ashr, i32 %n",
        "  %wide = zext i32 %sel to i64",
        "  %swide = sext i32 %sel to i64",
        "  %narrow = trunc i64 %swide to i16",
        "  %fwide = fpext half %h to float",
        "  %fnarrow = fptrunc double %d to float",
        "  %fromint = sitofp i32 %n to float",
        "  %bits = bitcast float %fromint to i32",
        "  %addr = ptrtoint ptr addrspace(1) %out to i64",
        "  %back = inttoptr i64 %addr to ptr addrspace(1)",
        # GEPs keep the address space of their pointer (xDSL's converter drops it).
        "  %elt = getelementptr i32, ptr addrspace(1) %back, i64 %wide",
        "  %row = getelementptr inbounds [16384 x i8], ptr addrspace(3) @smem, i32 0, i32 128",
        "  %t2 = getelementptr i32, ptr addrspace(1) @table, i64 7",
        "  %tv = load i32, ptr addrspace(1) %t2, align 4",
        "  store i32 %bits, ptr addrspace(1) %elt, align 4",
        "  store volatile i16 %narrow, ptr addrspace(3) %row, align 2",
        "  store i32 %tv, ptr addrspace(1) %elt, align 4, !nontemporal !0",
        "  %atom = load atomic i32, ptr addrspace(1) %elt acquire, align 4",
        "  %ins = insertelement <4 x i32> <i32 1, i32 2, i32 3, i32 4>, i32 %atom, i32 0",
        "  %shuf = shufflevector <4 x i32> %ins, <4 x i32> <i32 1, i32 2, i32 3, i32 4>, "
        "<4 x i32> <i32 0, i32 5, i32 poison, i32 3>",
        # Several results of inline asm come as a struct.
        '  %pair = call { i32, i32 } asm sideeffect "mov.u32 $0, $2; mov.u32 $1, %tid.x;", '
        '"=r,=r,f"(float %fnarrow)',
        "  %first = extractvalue { i32, i32 } %pair, 0",
        "  %pair2 = insertvalue { i32, i32 } undef, i32 %first, 1",
        "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
        "  %sq = call i32 @helper(i32 %tid)",
        "  %slot = alloca i32, i64 7, align 16",
        '  call void asm sideeffect "st.shared.u32 [$0], $1;", "l,r"(ptr addrspace(3) @bar, '
        "i32 undef)",
        "  br i1 %is7, label %bb1, label %bb2",
        "bb1:",
        # Block arguments become phis, one entry per incoming edge.
        "  %i = phi i32 [ 0, %bb0 ], [ %next, %bb1 ]",
        "  %next = add i32 %i, %sq",
        "  br i1 %done, label %bb2, label %bb1",
        "bb2:",
        "  ret void",
        "declare void @llvm.trap()",
        "declare float @llvm.fabs.f32(float)",
        "declare float @llvm.fma.f32(float, float, float)",
        "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
        # copy.abi is metadata for the runtime, not a function attribute.
        'attributes #0 = { "nvvm.maxntid"="256" }',
        "!0 = !{i32 1}",
    )
    assert "copy.abi" not in ir
    ptx = compile_all(ir, ("sm_80", "sm_90a", "sm_100a"))
    for text in ptx.values():
        check(text, ".entry all_ops(", ".param .align 64 .b8 all_ops_param_0[128]", ".maxntid 256")


def test_values_without_name_hints_are_numbered_in_order(ctx: Context):
    ir = translate(
        ctx,
        """
        "llvm.func"() <{sym_name = "f", function_type = !llvm.func<i32 (i32)>,
            CConv = #llvm.cconv<ccc>, linkage = #llvm.linkage<external>,
            visibility_ = 0 : i64}> ({
        ^bb0(%0 : i32):
          %1 = "llvm.add"(%0, %0) <{overflowFlags = 0 : i32}> : (i32, i32) -> i32
          %2 = "llvm.mlir.constant"() <{value = 3 : i32}> : () -> i32
          %3 = "llvm.mul"(%1, %2) <{overflowFlags = 0 : i32}> : (i32, i32) -> i32
          "llvm.return"(%3) : (i32) -> ()
        }) : () -> ()
        """,
    )
    check(
        ir,
        "define i32 @f(i32 %0) {",
        "  %1 = add i32 %0, %0",
        "  %2 = mul i32 %1, 3",
        "  ret i32 %2",
    )
    compile_all(ir, ("sm_80",))


def test_rarer_ops_and_function_properties(ctx: Context):
    ir = translate(
        ctx,
        """
        builtin.module {
          llvm.mlir.global internal @counter() {addr_space = 1 : i32, alignment = 4 : i64} : i32 {
            %c = llvm.mlir.constant(42 : i32) : i32
            llvm.return %c : i32
          }
          llvm.func @vprintf(!llvm.ptr, ...) -> i32
          llvm.func @callee(%x: f32) -> f32
              attributes {passthrough = ["noinline", ["nvvm.note", "1"]], no_unwind} {
            llvm.return %x : f32
          }
          llvm.func @rare(%v: vector<4xf32>, %p: !llvm.ptr, %m: vector<4xi1>, %fp: !llvm.ptr)
              -> f32 {
            %c0 = llvm.mlir.constant(0.0 : f32) : f32
            %one = llvm.mlir.constant(1 : i32) : i32
            %sum = "llvm.intr.vector.reduce.fadd"(%c0, %v)
              <{fastmathFlags = #llvm.fastmath<reassoc>}> : (f32, vector<4xf32>) -> f32
            "llvm.intr.masked.store"(%v, %p, %m) <{alignment = 16 : i32}>
              : (vector<4xf32>, !llvm.ptr, vector<4xi1>) -> ()
            %sp = "llvm.intr.stacksave"() : () -> !llvm.ptr
            "llvm.intr.stackrestore"(%sp) : (!llvm.ptr) -> ()
            %n = llvm.call @vprintf(%p, %one) vararg(!llvm.func<i32 (!llvm.ptr, ...)>)
              : (!llvm.ptr, i32) -> i32
            %r = llvm.call %fp(%sum) : !llvm.ptr, (f32) -> f32
            %q = llvm.call @callee(%r) : (f32) -> f32
            %local = llvm.alloca %one x f32 {alignment = 4 : i64} : (i32) -> !llvm.ptr<5>
            llvm.store %q, %local {alignment = 4 : i64} : f32, !llvm.ptr<5>
            %max = llvm.intr.maxnum(%q, %sum) : (f32, f32) -> f32
            llvm.return %max : f32
          }
        }
        """,
    )
    check(
        ir,
        # An initializer region that returns a constant.
        "@counter = internal addrspace(1) global i32 42, align 4",
        "declare i32 @vprintf(ptr, ...)",
        "define float @callee(float %x) #0 {",
        "define float @rare(<4 x float> %v, ptr %p, <4 x i1> %m, ptr %fp) {",
        "  %sum = call reassoc float @llvm.vector.reduce.fadd.v4f32(float 0x0000000000000000, "
        "<4 x float> %v)",
        # LLVM 22: the alignment is on the pointer, no longer an i32 operand.
        "  call void @llvm.masked.store.v4f32.p0(<4 x float> %v, ptr align 16 %p, <4 x i1> %m)",
        "  %sp = call ptr @llvm.stacksave.p0()",
        "  call void @llvm.stackrestore.p0(ptr %sp)",
        "  %n = call i32 (ptr, ...) @vprintf(ptr %p, i32 1)",
        "  %r = call float %fp(float %sum)",
        "  %local = alloca float, i32 1, align 4, addrspace(5)",
        "  %max = call float @llvm.maxnum.f32(float %q, float %sum)",
        'attributes #0 = { nounwind noinline "nvvm.note"="1" }',
    )
    compile_all(ir, ("sm_90a",))


# --- the kernel conventions of docs/lowering.md ---------------------------------------------

TMA_KERNEL = """
builtin.module {
  llvm.mlir.global internal @__copy_smem_0() {addr_space = 3 : i32, alignment = 1024 : i64}
    : !llvm.array<16384 x i8>
  llvm.mlir.global internal @__copy_smem_1() {addr_space = 3 : i32, alignment = 8 : i64}
    : !llvm.array<8 x i8>
  llvm.func @tile_copy(
      %tin: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>,
                       nvvm.grid_constant},
      %tout: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>,
                        nvvm.grid_constant})
      attributes {nvvm.kernel, nvvm.reqntid = array<i32: 128, 1, 1>,
                  nvvm.cluster_dim = array<i32: 2, 1, 1>} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %bytes = llvm.mlir.constant(16384 : i32) : i32
    %false = llvm.mlir.constant(false) : i1
    %c0_16 = llvm.mlir.constant(0 : i16) : i16
    %c0_64 = llvm.mlir.constant(0 : i64) : i64
    %tile = llvm.mlir.addressof @__copy_smem_0 : !llvm.ptr<3>
    %bar = llvm.mlir.addressof @__copy_smem_1 : !llvm.ptr<3>
    %tid = "testir.tid"() : () -> i32
    %leader = llvm.icmp "eq" %tid, %c0 : i32
    llvm.cond_br %leader, ^load, ^wait
  ^load:
    llvm.call_intrinsic "llvm.nvvm.mbarrier.init.shared"(%bar, %c1) : (!llvm.ptr<3>, i32) -> ()
    llvm.call_intrinsic "llvm.nvvm.fence.proxy.async.shared_cta"() : () -> ()
    %state = llvm.call_intrinsic "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta"(
      %bar, %bytes) : (!llvm.ptr<3>, i32) -> i64
    %dst = "testir.to_cluster"(%tile) : (!llvm.ptr<3>) -> !llvm.ptr<7>
    llvm.call_intrinsic "llvm.nvvm.cp.async.bulk.tensor.g2s.tile.2d"(
      %dst, %bar, %tin, %c0, %c0, %c0_16, %c0_64, %false, %false, %c0)
      : (!llvm.ptr<7>, !llvm.ptr<3>, !llvm.ptr, i32, i32, i16, i64, i1, i1, i32) -> ()
    llvm.br ^wait
  ^wait:
    %ready = "testir.spin"(%bar) : (!llvm.ptr<3>) -> i1
    llvm.call_intrinsic "llvm.nvvm.cp.async.bulk.tensor.s2g.tile.2d"(
      %tile, %tout, %c0, %c0, %c0_64, %false) : (!llvm.ptr<3>, !llvm.ptr, i32, i32, i64, i1) -> ()
    llvm.call_intrinsic "llvm.nvvm.cp.async.bulk.commit.group"() : () -> ()
    llvm.call_intrinsic "llvm.nvvm.cp.async.bulk.wait.group.read"(%c0) : (i32) -> ()
    llvm.return
  }
}
"""


def test_tma_kernel_conventions(ir_ctx: Context):
    ir = translate(ir_ctx, TMA_KERNEL)
    check(
        ir,
        "@__copy_smem_0 = internal addrspace(3) global [16384 x i8] undef, align 1024",
        "@__copy_smem_1 = internal addrspace(3) global [8 x i8] undef, align 8",
        'define ptx_kernel void @tile_copy(ptr byval([128 x i8]) align 64 "nvvm.grid_constant" '
        '%tin, ptr byval([128 x i8]) align 64 "nvvm.grid_constant" %tout) #0 {',
        # ToLLVMIR ops print themselves with fresh names.
        "  %t0 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
        "  %leader = icmp eq i32 %t0, 0",
        "  %t1 = addrspacecast ptr addrspace(3) @__copy_smem_0 to ptr addrspace(7)",
        "  call void @llvm.nvvm.cp.async.bulk.tensor.g2s.tile.2d(ptr addrspace(7) %t1, "
        "ptr addrspace(3) @__copy_smem_1, ptr %tin, i32 0, i32 0, i16 0, i64 0, i1 false, "
        "i1 false, i32 0)",
        'attributes #0 = { "nvvm.reqntid"="128,1,1" "nvvm.cluster_dim"="2,1,1" }',
    )
    for target, ptx in compile_all(ir, ("sm_90a", "sm_100a")).items():
        check(
            ptx,
            f".target {target}",
            ".entry tile_copy(",
            ".param .align 64 .b8 tile_copy_param_0[128],",
            ".param .align 64 .b8 tile_copy_param_1[128]",
            ".reqntid 128, 1, 1",
            ".reqnctapercluster 2, 1, 1",
            ".shared .align 1024 .b8 __copy_smem_0[16384];",
            "mbarrier.init.shared.b64",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "mbarrier.test_wait.parity.shared::cta.b64",
            "cp.async.bulk.tensor.2d.global.shared::cta",
        )
        # The grid-constant tensor maps are read in place, not copied to local memory.
        assert "__local_depot" not in ptx


def test_toir_results_used_before_they_are_printed(ir_ctx: Context):
    # ^use comes first in the text but is reached from ^def, whose spin op opens blocks of
    # its own: the phi needs the result's name and the label of the block that ends ^def.
    ir = translate(
        ir_ctx,
        """
        builtin.module {
          llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
          llvm.func @f(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
            %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
            llvm.br ^def
          ^use(%flag: i1, %lane: i32):
            %wide = llvm.zext %flag : i1 to i32
            %sum = llvm.add %wide, %lane : i32
            llvm.store %sum, %out {alignment = 4 : i64} : i32, !llvm.ptr<1>
            llvm.return
          ^def:
            %tid = "testir.tid"() : () -> i32
            %ready = "testir.spin"(%bar) : (!llvm.ptr<3>) -> i1
            llvm.br ^use(%ready, %tid : i1, i32)
          }
        }
        """,
    )
    check(
        ir,
        "bb1:",
        "  %flag = phi i1 [ %t3, %t2 ]",
        "  %lane = phi i32 [ %t0, %t2 ]",
        "bb2:",
        "  %t0 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
        "  br label %t1",
        "t1:",
        "  br i1 %t3, label %t2, label %t1",
        "t2:",
        "  br label %bb1",
    )
    compile_all(ir, ("sm_80",))


# --- constants ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "type", "spelling"),
    [
        (1.0, Float16Type(), "0xH3C00"),
        (1.0, BFloat16Type(), "0xR3F80"),
        (0.1, Float32Type(), "0x3FB99999A0000000"),
        (0.1, Float64Type(), "0x3FB999999999999A"),
        (1e300, Float32Type(), "0x7FF0000000000000"),  # beyond float: +inf
    ],
)
def test_float_literals(value: float, type: object, spelling: str):
    assert _float_literal(value, type) == spelling  # pyright: ignore[reportArgumentType]


def test_vector_and_float_constants_compile(ctx: Context):
    ir = translate(
        ctx,
        """
        builtin.module {
          llvm.func @f(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
            %v = llvm.mlir.constant(dense<2.5> : vector<2xf32>) : vector<2xf32>
            %h = llvm.mlir.constant(1.0 : f16) : f16
            %b = llvm.mlir.constant(-2.0 : bf16) : bf16
            %z = llvm.mlir.zero : !llvm.struct<(i32, f32)>
            %zf = llvm.extractvalue %z[1] : !llvm.struct<(i32, f32)>
            %s = llvm.fadd %v, %v : vector<2xf32>
            llvm.store %s, %p {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
            llvm.store %zf, %p {alignment = 4 : i64} : f32, !llvm.ptr<1>
            llvm.store %h, %p {alignment = 2 : i64} : f16, !llvm.ptr<1>
            llvm.store %b, %p {alignment = 2 : i64} : bf16, !llvm.ptr<1>
            llvm.return
          }
        }
        """,
    )
    check(
        ir,
        "%zf = extractvalue { i32, float } zeroinitializer, 1",
        "%s = fadd <2 x float> <float 0x4004000000000000, float 0x4004000000000000>, <float",
        "store half 0xH3C00,",
        "store bfloat 0xRC000,",
    )
    compile_all(ir, ("sm_90a",))


def test_data_layout_is_llvm_22s_nvptx_default():
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    machine = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(cpu="sm_90a")
    assert str(machine.target_data) == NVPTX_DATA_LAYOUT


# --- what cannot be translated ------------------------------------------------------------


def translation_error(ctx: Context, text: str) -> TranslationError:
    module = parse(ctx, text)
    with pytest.raises(TranslationError) as info:
        translate_module(module)
    assert isinstance(info.value, DiagnosticException)
    return info.value


def test_unrealized_cast_names_the_pass_to_run(ctx: Context):
    error = translation_error(
        ctx,
        """
        builtin.module {
          llvm.func @f(%x: i64) {
            %y = builtin.unrealized_conversion_cast %x : i64 to index
            llvm.return
          }
        }
        """,
    )
    assert error.op.name == "builtin.unrealized_conversion_cast"
    assert "run reconcile-unrealized-casts first" in str(error)


def test_op_of_another_dialect_is_an_error_at_that_op(ctx: Context):
    error = translation_error(
        ctx,
        """
        builtin.module {
          llvm.func @f() {
            %c = arith.constant 1 : i32
            llvm.return
          }
        }
        """,
    )
    assert error.op.name == "arith.constant"
    assert "not an llvm dialect op and has no to_llvm_ir method" in str(error)


def test_module_level_op_must_be_func_or_global(ctx: Context):
    error = translation_error(ctx, "builtin.module { func.func @f() { func.return } }")
    assert error.op.name == "func.func"


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        # A misspelled launch bound must not vanish.
        ("attributes {nvvm.reqntdi = array<i32: 128>}", "'nvvm.reqntdi"),
        ("attributes {nvvm.kernel, llvm.bogus}", "'llvm.bogus"),
    ],
)
def test_unknown_llvm_and_nvvm_function_attributes(ctx: Context, attributes: str, message: str):
    error = translation_error(
        ctx, f"builtin.module {{ llvm.func @f() {attributes} {{ llvm.return }} }}"
    )
    assert error.op.name == "llvm.func"
    assert message in str(error)


def test_unknown_argument_attribute(ctx: Context):
    error = translation_error(
        ctx,
        "builtin.module { llvm.func @f(%p: !llvm.ptr {nvvm.grid_const}) { llvm.return } }",
    )
    assert "@f argument #0: attribute 'nvvm.grid_const'" in str(error)


def test_kernel_must_return_void(ctx: Context):
    error = translation_error(
        ctx,
        """
        builtin.module {
          llvm.func @f() -> i32 attributes {nvvm.kernel} {
            %c = llvm.mlir.constant(0 : i32) : i32
            llvm.return %c : i32
          }
        }
        """,
    )
    assert "nvvm.kernel must return void" in str(error)


def test_toir_op_that_does_not_bind_its_result(ir_ctx: Context):
    error = translation_error(
        ir_ctx,
        """
        builtin.module {
          llvm.func @f() {
            %x = "testir.forgetful"() : () -> i32
            llvm.return
          }
        }
        """,
    )
    assert error.op.name == "testir.forgetful"
    assert "did not bind its result #0" in str(error)


def test_cond_br_to_one_block_with_different_arguments(ctx: Context):
    error = translation_error(
        ctx,
        """
        builtin.module {
          llvm.func @f(%c: i1, %a: i32, %b: i32) {
            llvm.cond_br %c, ^next(%a : i32), ^next(%b : i32)
          ^next(%x: i32):
            llvm.return
          }
        }
        """,
    )
    assert error.op.name == "llvm.cond_br"


def test_untranslatable_constant_is_reported_at_the_constant(ctx: Context):
    error = translation_error(
        ctx,
        """
        builtin.module {
          llvm.func @f() {
            %c = llvm.mlir.constant(1.0 : f80) : f80
            llvm.return
          }
        }
        """,
    )
    assert error.op.name == "llvm.mlir.constant"
    assert "no LLVM IR literal for a f80 constant" in str(error)


def test_one_intrinsic_called_with_two_signatures(ctx: Context):
    error = translation_error(
        ctx,
        """
        builtin.module {
          llvm.func @f(%a: i32, %b: i64) {
            llvm.call_intrinsic "llvm.nvvm.prefetch.L2"(%a) : (i32) -> ()
            llvm.call_intrinsic "llvm.nvvm.prefetch.L2"(%b) : (i64) -> ()
            llvm.return
          }
        }
        """,
    )
    assert error.op.operands[0].type == i64  # the second call
    assert "@llvm.nvvm.prefetch.L2 is declared twice, differently" in str(error)
