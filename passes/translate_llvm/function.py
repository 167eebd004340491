"""The function level of the translation: one `llvm.func` at a time, its header (linkage,
`ptx_kernel`, parameters and their attributes, the function attributes), its blocks and
phis, and its ops: llvm ops through the handlers of `instructions`, other ops through their
own `to_llvm_ir` (`FunctionTranslator` is the `IREmitter` they print into). Names and
labels follow the rules in the package docstring; a use of a `ToLLVMIR` result printed
before the op binds it is a placeholder, resolved when the function is complete.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import UnrealizedConversionCastOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from passes.llvm_ir import ToLLVMIR
from passes.translate_llvm.attributes import (
    KERNEL_ATTR,
    LINKAGE_DEFAULT,
    UNNAMED_ADDR,
    VISIBILITY,
    function_attributes,
)
from passes.translate_llvm.instructions import HANDLERS
from passes.translate_llvm.module import LITERAL_OPS, ModuleTranslator
from passes.translate_llvm.spelling import (
    IDENTIFIER,
    TranslationError,
    Unsupported,
    symbol,
)

_LABEL_LINE = re.compile(r'^\s*([-a-zA-Z$._0-9]+|"[^"]*"):\s*(;.*)?$')


class FunctionTranslator:
    """Translates one `llvm.func`; it is the `IREmitter` that `ToLLVMIR` ops print into."""

    def __init__(self, module: ModuleTranslator, func: llvm.FuncOp):
        self.module = module
        self.func = func
        self.used_names: set[str] = set()
        self.names: dict[SSAValue, str] = {}
        """LLVM IR names (or literals) of values, fixed before any instruction is printed."""
        self.bound: dict[SSAValue, str] = {}
        """Names of the results of `ToLLVMIR` ops, known once the op has printed itself."""
        self.placeholders: dict[str, Callable[[], str | None]] = {}
        self.labels: dict[Block, str] = {}
        self.exit_labels: dict[Block, str] = {}
        """The LLVM block that ends each block (a `ToLLVMIR` op may open new blocks)."""
        self.lines: list[str] = []
        self.op: Operation = func
        self.block: Block | None = None
        self.counter = 0
        self.fresh_counter = 0
        self._toir_results: set[SSAValue] = set()

    # IREmitter.

    def value(self, value: SSAValue) -> str:
        if value in self.names:
            return self.names[value]
        if value in self.bound:
            return self.bound[value]
        if value in self._toir_results:
            token = f"\0{len(self.placeholders)}\0"
            self.placeholders[token] = lambda: self.bound.get(value)
            return token
        raise Unsupported(f"value {value} is not defined in function @{self.func.sym_name.data}")

    def type(self, type: Attribute) -> str:
        return self.module.type(type)

    def typed(self, value: SSAValue) -> str:
        return f"{self.type(value.type)} {self.value(value)}"

    def fresh(self) -> str:
        while f"t{self.fresh_counter}" in self.used_names:
            self.fresh_counter += 1
        name = f"t{self.fresh_counter}"
        self.used_names.add(name)
        return "%" + name

    def emit(self, instruction: str) -> None:
        for line in instruction.splitlines():
            if match := _LABEL_LINE.match(line):  # a ToLLVMIR op opens a block of its own
                self.lines += ["", line.strip()]
                assert self.block is not None
                self.exit_labels[self.block] = "%" + match.group(1)
            else:
                self.lines.append("  " + line.strip())

    def declare(self, declaration: str) -> None:
        self.module.declare(declaration)

    def bind(self, result: SSAValue, name: str) -> None:
        self.bound[result] = name

    # Naming, before any instruction is printed.

    def _name(self, value: SSAValue) -> str:
        hint = value.name_hint
        if hint and IDENTIFIER.fullmatch(hint):
            name, suffix = hint, 0
            while name in self.used_names:
                suffix += 1
                name = f"{hint}_{suffix}"
            self.used_names.add(name)
            return "%" + name
        name = str(self.counter)
        self.counter += 1
        return "%" + name

    def _assign_names(self, blocks: list[Block], edges: dict[Block, list[Any]]) -> None:
        # Labels first, so that a value hint `bb1` gets the suffix rather than the block.
        for index, block in enumerate(blocks):
            self.labels[block] = f"bb{index}"
            self.exit_labels[block] = f"%bb{index}"
            self.used_names.add(f"bb{index}")
        for index, block in enumerate(blocks):
            for arg in block.args:
                # A block nothing branches to has no phi; its arguments are poison.
                has_edges = index == 0 or edges.get(block)
                self.names[arg] = self._name(arg) if has_edges else "poison"
            for op in block.ops:
                self.op = op
                if _is_literal(type(op)):
                    literal = self.module.literal(op.results[0])
                    assert literal is not None
                    self.names[op.results[0]] = literal
                elif _is_llvm_op(op):
                    for result in op.results:
                        self.names[result] = self._name(result)
                else:
                    self._toir_results.update(op.results)

    # The function.

    def translate(self) -> str:
        """The function's text; an error is reported at the op being translated (`self.op`)."""
        try:
            return self._translate()
        except Unsupported as exc:
            raise TranslationError(self.op, str(exc)) from None

    def _translate(self) -> str:
        func = self.func
        blocks = list(func.body.blocks)
        edges = self._edges(blocks)
        self._assign_names(blocks, edges)
        self.op = func
        header = self._header(func.function_type, blocks)
        if not blocks:
            return header
        for index, block in enumerate(blocks):
            self.block = block
            if index:
                self.lines += ["", f"{self.labels[block]}:"]
                self._phis(block, edges.get(block, []))
            else:
                self.lines.append(f"{self.labels[block]}:")
            for op in block.ops:
                self.op = op
                self._translate_op(op)
        self.op = func
        body = self._resolve_placeholders("\n".join(self.lines))
        return f"{header} {{\n{body}\n}}"

    def _resolve_placeholders(self, body: str) -> str:
        def resolve(match: re.Match[str]) -> str:
            name = self.placeholders[match.group(0)]()
            if name is None:
                raise Unsupported("a result of a ToLLVMIR op is used but was never bound")
            return name

        if not self.placeholders:
            return body
        return re.sub("\0[0-9]+\0", resolve, body)

    def _header(self, ftype: llvm.LLVMFunctionType, blocks: list[Block]) -> str:
        func = self.func
        module = self.module
        where = f"@{func.sym_name.data}"
        attrs = dict(func.attributes)
        is_kernel = attrs.pop(KERNEL_ATTR, None) is not None
        fn_attrs = function_attributes(func, attrs, where)
        words = ["define" if blocks else "declare"]
        linkage = func.linkage.linkage.data
        if linkage != LINKAGE_DEFAULT:
            words.append(linkage)
        if visibility := VISIBILITY.get(func.visibility_.value.data):
            words.append(visibility)
        cconv = func.CConv.convention.data
        if is_kernel:
            if cconv != "ccc" or not isinstance(ftype.output, llvm.LLVMVoidType):
                raise Unsupported(
                    "an nvvm.kernel must return void and use the default calling convention"
                )
            words.append("ptx_kernel")
        elif cconv != "ccc":
            words.append(cconv)
        res_attrs = func.res_attrs.data[0] if func.res_attrs else None
        ret = module.param_attrs(res_attrs, f"{where} result") + module.type(ftype.output)
        words.append(ret)
        arg_attrs = func.arg_attrs.data if func.arg_attrs else ()
        params: list[str] = []
        for i, type in enumerate(ftype.inputs.data):
            text = module.type(type)
            if i < len(arg_attrs):
                attrs_i = module.param_attrs(arg_attrs[i], f"{where} argument #{i}")
                text += " " + attrs_i.rstrip() if attrs_i else ""
            if blocks:
                text += " " + self.names[blocks[0].args[i]]
            params.append(text)
        if ftype.is_variadic:
            params.append("...")
        header = " ".join(words) + f" {symbol(func.sym_name.data)}({', '.join(params)})"
        if func.unnamed_addr is not None and UNNAMED_ADDR.get(func.unnamed_addr.value.data):
            header += " " + UNNAMED_ADDR[func.unnamed_addr.value.data]
        return header + module.attribute_group(fn_attrs)

    # Control flow.

    def _edges(self, blocks: list[Block]) -> dict[Block, list[Any]]:
        """For each block, the (predecessor, operands) of each edge that reaches it."""
        edges: dict[Block, list[Any]] = {}
        for block in blocks:
            terminator = block.last_op
            if terminator is None or not terminator.successors:
                continue
            if isinstance(terminator, llvm.BrOp):
                targets = [(terminator.successor, tuple(terminator.arguments))]
            elif isinstance(terminator, llvm.CondBrOp):
                targets = [
                    (terminator.then_block, tuple(terminator.then_arguments)),
                    (terminator.else_block, tuple(terminator.else_arguments)),
                ]
            else:
                raise TranslationError(
                    terminator, f"'{terminator.name}' branches, but only llvm.br/cond_br can"
                )
            for target, operands in targets:
                edges.setdefault(target, []).append((block, operands, terminator))
        return edges

    def _phis(self, block: Block, edges: list[Any]) -> None:
        if not edges:
            return
        # One phi entry per edge; a cond_br with both edges to one block must agree.
        seen: dict[Block, tuple[SSAValue, ...]] = {}
        for pred, operands, terminator in edges:
            if seen.setdefault(pred, operands) != operands:
                raise TranslationError(
                    terminator,
                    "both successors are the same block with different arguments; "
                    "LLVM IR cannot express that without an extra block",
                )
        for i, arg in enumerate(block.args):
            self.op = edges[0][2]
            incoming = ", ".join(
                f"[ {self.value(operands[i])}, {self._exit_label(pred)} ]"
                for pred, operands, _ in edges
            )
            self.lines.append(f"  {self.names[arg]} = phi {self.type(arg.type)} {incoming}")

    def _exit_label(self, block: Block) -> str:
        """The label of the LLVM block that ends `block`, known once `block` is printed."""
        token = f"\0{len(self.placeholders)}\0"
        self.placeholders[token] = lambda: self.exit_labels[block]
        return token

    # Ops.

    def _translate_op(self, op: Operation) -> None:
        if _is_literal(type(op)):
            return  # printed inline where used
        handler = HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if _is_llvm_op(op):
            raise Unsupported(f"'{op.name}' has no LLVM IR translation yet")
        if isinstance(op, UnrealizedConversionCastOp):
            raise Unsupported(
                "'builtin.unrealized_conversion_cast' has no LLVM IR equivalent; "
                "run reconcile-unrealized-casts first"
            )
        if _translates_itself(type(op)):
            op.to_llvm_ir(self)  # pyright: ignore[reportAttributeAccessIssue]
            for i, result in enumerate(op.results):
                if result not in self.bound:
                    raise Unsupported(f"'{op.name}' did not bind its result #{i}")
            return
        raise Unsupported(
            f"'{op.name}' cannot be translated to LLVM IR: it is not an llvm dialect op and "
            "has no to_llvm_ir method"
        )

    def define(self, op: Operation, text: str) -> None:
        """Prints `%name = text` for the op's result, or `text` when it has none."""
        if op.results and not isinstance(op.results[0].type, llvm.LLVMVoidType):
            self.lines.append(f"  {self.names[op.results[0]]} = {text}")
        else:
            self.lines.append(f"  {text}")

    def call_intrinsic(
        self,
        op: Operation,
        name: str,
        args: Iterable[SSAValue],
        result_type: Attribute | None,
        fastmath: str = "",
        arg_prefixes: Sequence[str] = (),
    ) -> None:
        """`call T @llvm.x(args)`, declaring `@llvm.x` at module level."""
        args = list(args)
        ret = self.type(result_type) if result_type is not None else "void"
        types = [self.type(a.type) for a in args]
        self.declare(f"declare {ret} {symbol(name)}({', '.join(types)})")
        prefixes = list(arg_prefixes) + [""] * (len(args) - len(arg_prefixes))
        operands = ", ".join(
            f"{t} {p}{self.value(a)}" for t, p, a in zip(types, prefixes, args, strict=True)
        )
        self.define(op, f"call {fastmath}{ret} {symbol(name)}({operands})")


@cache
def _translates_itself(op_type: type[Operation]) -> bool:
    """Whether ops of `op_type` implement `ToLLVMIR` (read once per class: a runtime
    protocol check costs about 10 us, and the method is the class's)."""
    return issubclass(op_type, ToLLVMIR)


@cache
def _is_literal(op_type: type[Operation]) -> bool:
    """Whether ops of `op_type` are `LITERAL_OPS` (read once per class: `isinstance` of an op
    goes through ABCMeta, four times for the tuple, on every op twice)."""
    return issubclass(op_type, LITERAL_OPS)


def _is_llvm_op(op: Operation) -> bool:
    return op.name.startswith("llvm.")
