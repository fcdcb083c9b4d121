/**
 * Device code shared by the CUDA and OpenCL generators: one kernel body per
 * {@link GpuLaunch}, printed in a dialect. Bound loops read their thread
 * index (guarded when the launch is wider than the loop), unrolled loops get
 * `#pragma unroll` (unless they contain a barrier), other loops stay loops,
 * per-thread arrays are private
 * arrays and shared arrays are declared once at the top of the kernel.
 * @module
 */
import type { Stmt, ThreadAxis } from "./ast.ts";
import { expr } from "./codegen_c.ts";
import { type GpuLaunch, walk } from "./target_gpu.ts";

/** How a GPU language spells what the kernels need. */
export interface Dialect {
  /** The index of a thread axis, e.g. `threadIdx.x` or `get_local_id(0)`. */
  index(axis: ThreadAxis): string;
  /** Qualifier of a block-shared array, e.g. `__shared__`. */
  shared: string;
  /** A block-wide barrier statement. */
  barrier: string;
}

const DIM: Record<string, number> = { x: 0, y: 1, z: 2 };

/** The extent a launch gives a thread axis. */
export function launchExtent(l: GpuLaunch, axis: ThreadAxis): number {
  const [kind, d] = axis.split(".");
  return (kind === "blockIdx" ? l.grid : l.block)[DIM[d]];
}

/** Lines of a kernel body (without the signature), indented by `depth`. */
export function deviceBody(l: GpuLaunch, d: Dialect, depth = 1): string[] {
  const out: string[] = [];
  const pad = "  ".repeat(depth);
  walk(l.body, (s) => {
    if (s.k === "alloc" && s.scope === "shared") {
      out.push(`${pad}${d.shared} float ${s.buf}[${s.size}];`);
    }
  });
  emitBlock(l.body, depth, out, l, d);
  return out;
}

function emitBlock(body: Stmt[], depth: number, out: string[], l: GpuLaunch, d: Dialect): void {
  for (const s of body) emitStmt(s, depth, out, l, d);
}

function emitStmt(s: Stmt, depth: number, out: string[], l: GpuLaunch, d: Dialect): void {
  const pad = "  ".repeat(depth);
  switch (s.k) {
    case "for":
      if (s.kind === "bind" && s.thread) {
        out.push(`${pad}{`, `${pad}  const int ${s.v} = ${d.index(s.thread)};`);
        if (s.extent < launchExtent(l, s.thread)) {
          out.push(`${pad}  if (${s.v} < ${s.extent}) {`);
          emitBlock(s.body, depth + 2, out, l, d);
          out.push(`${pad}  }`);
        } else emitBlock(s.body, depth + 1, out, l, d);
        out.push(`${pad}}`);
        return;
      }
      // Not around a barrier: PoCL's barrier handling blows up on unrolled copies.
      if (s.kind === "unroll" && !hasSync(s.body)) out.push(`${pad}#pragma unroll`);
      out.push(`${pad}for (int ${s.v} = 0; ${s.v} < ${s.extent}; ++${s.v}) {`);
      emitBlock(s.body, depth + 1, out, l, d);
      out.push(`${pad}}`);
      return;
    case "if":
      out.push(`${pad}if (${expr(s.cond)}) {`);
      emitBlock(s.body, depth + 1, out, l, d);
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
      if (s.scope !== "shared") out.push(`${pad}  float ${s.buf}[${s.size}];`);
      emitBlock(s.body, depth + 1, out, l, d);
      out.push(`${pad}}`);
      return;
    case "sync":
      out.push(`${pad}${d.barrier}`);
      return;
  }
}

function hasSync(body: Stmt[]): boolean {
  let found = false;
  walk(body, (s) => {
    if (s.k === "sync") found = true;
  });
  return found;
}

/** Every global buffer of a kernel (parameters, then temporaries), in `bufs` order. */
export function globalBuffers(
  k: { params: { buf: string; size: number }[]; temps: { buf: string; size: number }[] },
): { buf: string; size: number }[] {
  return [...k.params, ...k.temps];
}
