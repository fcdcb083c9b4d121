/**
 * Knob spaces now live in `ir/knobs.ts` (below the cost models); this module re-exports them.
 * @module
 */
export * from "../ir/knobs.ts";
