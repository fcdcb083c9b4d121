/**
 * What `tune --target cuda` plugs into the tuning loop: the CUDA measurer
 * (`measure/cuda.ts`, re-exported here). The GPU design spaces each strategy
 * searches are chosen by `tuner/tune_strategy.ts` (sketches for `random` and
 * `ansor`, the GPU knob template for the others).
 * @module
 */
export {
  createCudaMeasurer,
  cudaKernelSource,
  cudaMeasurement,
  type CudaMeasurementOptions,
  type CudaMeasurer,
  type CudaMeasurerOptions,
} from "../measure/cuda.ts";
