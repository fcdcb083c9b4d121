/**
 * The few OpenCL 1.2/2.0 entry points the OpenCL runner needs, through
 * `Deno.dlopen` of the ICD loader (`libOpenCL.so.1`, Debian's
 * `ocl-icd-libopencl1`; PoCL's `pocl-opencl-icd` gives a CPU platform).
 * @module
 */

/** Symbols of libOpenCL used here (handles are pointers, sizes `usize`). */
export const OPENCL_SYMBOLS = {
  clGetPlatformIDs: { parameters: ["u32", "buffer", "buffer"], result: "i32" },
  clGetPlatformInfo: {
    parameters: ["pointer", "u32", "usize", "buffer", "buffer"],
    result: "i32",
  },
  clGetDeviceIDs: {
    parameters: ["pointer", "u64", "u32", "buffer", "buffer"],
    result: "i32",
  },
  clGetDeviceInfo: {
    parameters: ["pointer", "u32", "usize", "buffer", "buffer"],
    result: "i32",
  },
  clCreateContext: {
    parameters: ["buffer", "u32", "buffer", "pointer", "pointer", "buffer"],
    result: "pointer",
  },
  clCreateCommandQueueWithProperties: {
    parameters: ["pointer", "pointer", "buffer", "buffer"],
    result: "pointer",
  },
  clCreateCommandQueue: {
    parameters: ["pointer", "pointer", "u64", "buffer"],
    result: "pointer",
  },
  clCreateProgramWithSource: {
    parameters: ["pointer", "u32", "buffer", "buffer", "buffer"],
    result: "pointer",
  },
  clBuildProgram: {
    parameters: ["pointer", "u32", "buffer", "buffer", "pointer", "pointer"],
    result: "i32",
  },
  clGetProgramBuildInfo: {
    parameters: ["pointer", "pointer", "u32", "usize", "buffer", "buffer"],
    result: "i32",
  },
  clCreateKernel: { parameters: ["pointer", "buffer", "buffer"], result: "pointer" },
  clCreateBuffer: {
    parameters: ["pointer", "u64", "usize", "pointer", "buffer"],
    result: "pointer",
  },
  clSetKernelArg: { parameters: ["pointer", "u32", "usize", "buffer"], result: "i32" },
  clEnqueueNDRangeKernel: {
    parameters: [
      "pointer",
      "pointer",
      "u32",
      "pointer",
      "buffer",
      "buffer",
      "u32",
      "pointer",
      "pointer",
    ],
    result: "i32",
  },
  clEnqueueWriteBuffer: {
    parameters: [
      "pointer",
      "pointer",
      "u32",
      "usize",
      "usize",
      "buffer",
      "u32",
      "pointer",
      "pointer",
    ],
    result: "i32",
  },
  clEnqueueReadBuffer: {
    parameters: [
      "pointer",
      "pointer",
      "u32",
      "usize",
      "usize",
      "buffer",
      "u32",
      "pointer",
      "pointer",
    ],
    result: "i32",
  },
  clFinish: { parameters: ["pointer"], result: "i32" },
  clReleaseMemObject: { parameters: ["pointer"], result: "i32" },
  clReleaseKernel: { parameters: ["pointer"], result: "i32" },
  clReleaseProgram: { parameters: ["pointer"], result: "i32" },
  clReleaseCommandQueue: { parameters: ["pointer"], result: "i32" },
  clReleaseContext: { parameters: ["pointer"], result: "i32" },
} as const;

/** The loaded library. */
export type OpenCLLibrary = Deno.DynamicLibrary<typeof OPENCL_SYMBOLS>;

/** `CL_DEVICE_TYPE_ALL` */
export const CL_DEVICE_TYPE_ALL = 0xffffffffn;
/** `CL_PLATFORM_NAME` */
export const CL_PLATFORM_NAME = 0x0902;
/** `CL_DEVICE_NAME` */
export const CL_DEVICE_NAME = 0x102b;
/** `CL_DEVICE_MAX_WORK_GROUP_SIZE` */
export const CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004;
/** `CL_PROGRAM_BUILD_LOG` */
export const CL_PROGRAM_BUILD_LOG = 0x1183;
/** `CL_MEM_READ_WRITE` */
export const CL_MEM_READ_WRITE = 1n;
/** `CL_TRUE` */
export const CL_TRUE = 1;

/** Names of the common OpenCL error codes, for messages. */
const ERRORS: Record<number, string> = {
  [-1]: "CL_DEVICE_NOT_FOUND",
  [-2]: "CL_DEVICE_NOT_AVAILABLE",
  [-3]: "CL_COMPILER_NOT_AVAILABLE",
  [-4]: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
  [-5]: "CL_OUT_OF_RESOURCES",
  [-6]: "CL_OUT_OF_HOST_MEMORY",
  [-11]: "CL_BUILD_PROGRAM_FAILURE",
  [-30]: "CL_INVALID_VALUE",
  [-33]: "CL_INVALID_DEVICE",
  [-34]: "CL_INVALID_CONTEXT",
  [-36]: "CL_INVALID_COMMAND_QUEUE",
  [-38]: "CL_INVALID_MEM_OBJECT",
  [-44]: "CL_INVALID_PROGRAM",
  [-45]: "CL_INVALID_PROGRAM_EXECUTABLE",
  [-46]: "CL_INVALID_KERNEL_NAME",
  [-48]: "CL_INVALID_KERNEL",
  [-49]: "CL_INVALID_ARG_INDEX",
  [-50]: "CL_INVALID_ARG_VALUE",
  [-51]: "CL_INVALID_ARG_SIZE",
  [-52]: "CL_INVALID_KERNEL_ARGS",
  [-53]: "CL_INVALID_WORK_DIMENSION",
  [-54]: "CL_INVALID_WORK_GROUP_SIZE",
  [-55]: "CL_INVALID_WORK_ITEM_SIZE",
  [-63]: "CL_INVALID_GLOBAL_WORK_SIZE",
  [-1001]: "CL_PLATFORM_NOT_FOUND_KHR",
};

/** `CL_BUILD_PROGRAM_FAILURE (-11)` style name of an error code. */
export function clErrorName(code: number): string {
  return `${ERRORS[code] ?? "CL_ERROR"} (${code})`;
}

/** An OpenCL call failed. */
export class OpenCLError extends Error {
  /** Creates the error for `call` returning `code`. */
  constructor(readonly call: string, readonly code: number, detail = "") {
    super(`${call} failed: ${clErrorName(code)}${detail ? `\n${detail}` : ""}`);
    this.name = "OpenCLError";
  }
}

/** Library names tried, in order. */
export const OPENCL_LIBRARIES: readonly string[] = ["libOpenCL.so.1", "libOpenCL.so"];

/** Loads libOpenCL; throws a clear Error naming the Debian packages when it is missing. */
export function loadOpenCL(): OpenCLLibrary {
  let last: unknown;
  for (const name of OPENCL_LIBRARIES) {
    try {
      return Deno.dlopen(name, OPENCL_SYMBOLS);
    } catch (e) {
      last = e;
    }
  }
  throw new Error(
    `libOpenCL not found (${
      (last as Error)?.message
    }); install pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev (bash scripts/setup.sh opencl)`,
  );
}

/** A NUL-terminated C string. */
export function cString(s: string): Uint8Array<ArrayBuffer> {
  const bytes = new TextEncoder().encode(s);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/** The address of a handle, as a one-element table (for `const cl_x *` arguments). */
export function handleTable(handles: (Deno.PointerValue)[]): BigUint64Array<ArrayBuffer> {
  return new BigUint64Array(handles.map((h) => BigInt(Deno.UnsafePointer.value(h))));
}
