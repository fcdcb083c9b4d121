/**
 * C code generation from the loop AST: OpenMP `parallel for` for parallel
 * loops, `omp simd` for vectorized loops (checked in tests to produce vector
 * instructions), `GCC unroll` for unrolled ones. The kernel is
 * `void tb_kernel(float **bufs)`; identifiers come from lowering, which
 * derives them from checked names only.
 *
 * @example
 * ```ts
 * import { generateC } from "./codegen_c.ts";
 * import { lower } from "./lower.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const src = generateC(lower(new Schedule(matmul(8, 8, 8), { prng: createPrng(0) })));
 * if (!src.includes("void tb_kernel(float **bufs)")) throw new Error();
 * ```
 * @module
 */
import type { AExpr, Kernel, Stmt } from "./ast.ts";

/** C source of a kernel. */
export function generateC(kernel: Kernel): string {
  const out: string[] = [
    "#include <stdlib.h>",
    "#include <string.h>",
    "",
    "void tb_kernel(float **bufs) {",
  ];
  kernel.params.forEach((p, i) => out.push(`  float *restrict ${p.buf} = bufs[${i}];`));
  for (const t of kernel.temps) {
    out.push(`  float *restrict ${t.buf} = (float *)aligned_alloc(64, ${alignedBytes(t.size)});`);
  }
  emitBlock(kernel.body, 1, out);
  for (const t of kernel.temps) out.push(`  free(${t.buf});`);
  out.push("}", "");
  return out.join("\n");
}

function alignedBytes(size: number): number {
  return Math.ceil((size * 4) / 64) * 64;
}

function emitBlock(body: Stmt[], depth: number, out: string[]): void {
  for (const s of body) emitStmt(s, depth, out);
}

function emitStmt(s: Stmt, depth: number, out: string[]): void {
  const pad = "  ".repeat(depth);
  switch (s.k) {
    case "for":
      if (s.kind === "parallel") out.push(`${pad}#pragma omp parallel for schedule(static)`);
      if (s.kind === "vectorize") out.push(`${pad}#pragma omp simd`);
      if (s.kind === "unroll") out.push(`${pad}_Pragma("GCC unroll ${s.extent}")`);
      out.push(`${pad}for (int ${s.v} = 0; ${s.v} < ${s.extent}; ++${s.v}) {`);
      emitBlock(s.body, depth + 1, out);
      out.push(`${pad}}`);
      return;
    case "if":
      out.push(`${pad}if (${expr(s.cond)}) {`);
      emitBlock(s.body, depth + 1, out);
      out.push(`${pad}}`);
      return;
    case "let":
      out.push(`${pad}const int ${s.name} = ${expr(s.value)};`);
      return;
    case "store":
      out.push(`${pad}${s.buf}[${expr(s.index)}] ${s.accumulate ? "+=" : "="} ${expr(s.value)};`);
      return;
    case "alloc":
      out.push(`${pad}{`);
      if (s.heap) {
        out.push(
          `${pad}  float *restrict ${s.buf} = (float *)aligned_alloc(64, ${alignedBytes(s.size)});`,
        );
        emitBlock(s.body, depth + 1, out);
        out.push(`${pad}  free(${s.buf});`);
      } else {
        out.push(`${pad}  float ${s.buf}[${s.size}] __attribute__((aligned(64)));`);
        emitBlock(s.body, depth + 1, out);
      }
      out.push(`${pad}}`);
      return;
    case "sync":
      // A GPU block barrier: serial C runs one thread at a time, nothing to wait for.
      return;
  }
}

/** C text of an expression. */
export function expr(e: AExpr): string {
  switch (e.k) {
    case "int":
      return e.v < 0 ? `(${e.v})` : String(e.v);
    case "float":
      return floatLiteral(e.v);
    case "var":
      return e.name;
    case "load":
      return `${e.buf}[${expr(e.index)}]`;
    case "bin":
      if (e.op === "max" || e.op === "min") {
        const a = expr(e.a), b = expr(e.b);
        return `((${a}) ${e.op === "max" ? ">" : "<"} (${b}) ? (${a}) : (${b}))`;
      }
      return `(${expr(e.a)} ${e.op} ${expr(e.b)})`;
    case "cmp":
      return `(${expr(e.a)} ${e.op} ${expr(e.b)})`;
    case "and":
      return `(${expr(e.a)} && ${expr(e.b)})`;
    case "select":
      return `(${expr(e.cond)} ? ${expr(e.t)} : ${expr(e.f)})`;
  }
}

function floatLiteral(v: number): string {
  if (!Number.isFinite(v)) throw new RangeError(`Cannot emit the float constant ${v}`);
  const s = String(v);
  return /[.e]/.test(s) ? `${s}f` : `${s}.0f`;
}
