/**
 * Moved to `measure/kernel_source.ts` (it depends only on `ir/`); kept so
 * that older imports keep working.
 * @module
 */
export {
  type KernelSource,
  kernelSource,
  referenceSource,
  signatureOf,
  toleranceOf,
} from "../measure/kernel_source.ts";
