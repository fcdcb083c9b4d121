/**
 * Thin Deno FFI binding to XGBoost's C API (`libxgboost.so.0`, Debian's
 * `libxgboost0`, XGBoost 1.7). The library is opened on first use. Every
 * call whose status is non-zero throws an {@link XGBoostError} carrying
 * `XGBGetLastError()`'s message.
 *
 * Calls are synchronous on purpose: XGBoost keeps the last error in
 * thread-local storage, so a call and its `XGBGetLastError` must run on the
 * same thread (Deno's `nonblocking` calls run elsewhere).
 *
 * Handles (`DMatrixHandle`, `BoosterHandle`) are `void*`, represented as
 * non-null `Deno.PointerObject`s; the caller frees them with
 * {@link dmatrixFree} / {@link boosterFree}.
 * @module
 */

/** Soname of the shared library, as installed by Debian's `libxgboost0`. */
export const XGBOOST_LIBRARY = "libxgboost.so.0";

const SYMBOLS = {
  XGBoostVersion: { parameters: ["buffer", "buffer", "buffer"], result: "void" },
  XGBGetLastError: { parameters: [], result: "pointer" },
  // (const float *data, bst_ulong nrow, bst_ulong ncol, float missing, DMatrixHandle *out)
  XGDMatrixCreateFromMat: { parameters: ["buffer", "u64", "u64", "f32", "buffer"], result: "i32" },
  // (DMatrixHandle, const char *field, const float *array, bst_ulong len)
  XGDMatrixSetFloatInfo: { parameters: ["pointer", "buffer", "buffer", "u64"], result: "i32" },
  // (DMatrixHandle, const char *field, const unsigned *array, bst_ulong len)
  XGDMatrixSetUIntInfo: { parameters: ["pointer", "buffer", "buffer", "u64"], result: "i32" },
  XGDMatrixFree: { parameters: ["pointer"], result: "i32" },
  // (const DMatrixHandle dmats[], bst_ulong len, BoosterHandle *out)
  XGBoosterCreate: { parameters: ["buffer", "u64", "buffer"], result: "i32" },
  XGBoosterFree: { parameters: ["pointer"], result: "i32" },
  // (BoosterHandle, const char *name, const char *value)
  XGBoosterSetParam: { parameters: ["pointer", "buffer", "buffer"], result: "i32" },
  // (BoosterHandle, int iter, DMatrixHandle dtrain)
  XGBoosterUpdateOneIter: { parameters: ["pointer", "i32", "pointer"], result: "i32" },
  // (BoosterHandle, DMatrixHandle, int option_mask, unsigned ntree_limit, int training,
  //  bst_ulong *out_len, const float **out_result)
  XGBoosterPredict: {
    parameters: ["pointer", "pointer", "i32", "u32", "i32", "buffer", "buffer"],
    result: "i32",
  },
  XGBoosterSaveModel: { parameters: ["pointer", "buffer"], result: "i32" },
  XGBoosterLoadModel: { parameters: ["pointer", "buffer"], result: "i32" },
  // (BoosterHandle, int *out)
  XGBoosterBoostedRounds: { parameters: ["pointer", "buffer"], result: "i32" },
  // (BoosterHandle, bst_ulong *out)
  XGBoosterGetNumFeature: { parameters: ["pointer", "buffer"], result: "i32" },
  // (BoosterHandle, bst_ulong *out_len, const char **out_str)
  XGBoosterSaveJsonConfig: { parameters: ["pointer", "buffer", "buffer"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

type Library = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let library: Deno.DynamicLibrary<typeof SYMBOLS> | undefined;

/**
 * A failed XGBoost C-API call. `message` is `"<function>: "` followed by
 * `XGBGetLastError()`'s text without its native stack trace; `lastError`
 * keeps the whole text.
 */
export class XGBoostError extends Error {
  /** The C function that failed, e.g. `"XGBoosterPredict"`. */
  readonly fn: string;
  /** Its return status (XGBoost uses -1 for failures). */
  readonly status: number;
  /** `XGBGetLastError()`'s full text, stack trace included. */
  readonly lastError: string;
  /**
   * @param fn the failing C function
   * @param status its non-zero return value
   * @param lastError XGBoost's last error message
   */
  constructor(fn: string, status: number, lastError: string) {
    super(`${fn}: ${lastError.split("\nStack trace:")[0].trim()}`);
    this.name = "XGBoostError";
    this.fn = fn;
    this.status = status;
    this.lastError = lastError;
  }
}

/**
 * The symbols of `libxgboost.so.0`, opening it on the first call.
 * @throws Error naming the apt package when the library cannot be loaded.
 */
export function xgboostLibrary(): Library {
  if (library === undefined) {
    try {
      library = Deno.dlopen(XGBOOST_LIBRARY, SYMBOLS);
    } catch (e) {
      throw new Error(
        `libxgboost0 not found: install it with "apt-get install libxgboost0" ` +
          `(bash scripts/setup.sh does)`,
        { cause: e },
      );
    }
  }
  return library.symbols;
}

/** Whether the library can be opened (for skipping tests where it is absent). */
export function xgboostAvailable(): boolean {
  try {
    xgboostLibrary();
    return true;
  } catch {
    return false;
  }
}

/** `[major, minor, patch]` of the loaded library, e.g. `[1, 7, 4]`. */
export function xgboostVersion(): [number, number, number] {
  const v = [new Int32Array(1), new Int32Array(1), new Int32Array(1)];
  xgboostLibrary().XGBoostVersion(v[0], v[1], v[2]);
  return [v[0][0], v[1][0], v[2][0]];
}

const encoder = new TextEncoder();

/** `s` as a null-terminated UTF-8 C string. */
export function cString(s: string): Uint8Array<ArrayBuffer> {
  const bytes = encoder.encode(s);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/** Throws an {@link XGBoostError} with XGBoost's last message unless `status` is 0. */
function check(fn: string, status: number): void {
  if (status === 0) return;
  const ptr = xgboostLibrary().XGBGetLastError();
  const message = ptr === null ? "(no message)" : Deno.UnsafePointerView.getCString(ptr);
  throw new XGBoostError(fn, status, message);
}

/** Reads the pointer an out-parameter received; throws if XGBoost left it null. */
function handleOf(fn: string, out: BigUint64Array): Deno.PointerObject {
  const ptr = Deno.UnsafePointer.create(out[0]);
  if (ptr === null) throw new XGBoostError(fn, 0, "returned a null handle");
  return ptr;
}

/**
 * `XGDMatrixCreateFromMat`: a DMatrix copied from a dense row-major matrix.
 * @param data `rows * cols` floats (XGBoost copies them)
 * @param missing the value meaning "missing"; default `NaN`
 */
export function dmatrixFromMat(
  data: Float32Array,
  rows: number,
  cols: number,
  missing = NaN,
): Deno.PointerObject {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 0 || cols < 0) {
    throw new RangeError(`bad matrix shape ${rows} x ${cols}`);
  }
  if (data.length !== rows * cols) {
    throw new RangeError(`matrix data has ${data.length} floats, expected ${rows} x ${cols}`);
  }
  const out = new BigUint64Array(1);
  check(
    "XGDMatrixCreateFromMat",
    xgboostLibrary().XGDMatrixCreateFromMat(data, BigInt(rows), BigInt(cols), missing, out),
  );
  return handleOf("XGDMatrixCreateFromMat", out);
}

/** `XGDMatrixSetFloatInfo`, e.g. field `"label"` or `"weight"`. */
export function dmatrixSetFloatInfo(
  dmat: Deno.PointerObject,
  field: string,
  values: Float32Array,
): void {
  check(
    "XGDMatrixSetFloatInfo",
    xgboostLibrary().XGDMatrixSetFloatInfo(dmat, cString(field), values, BigInt(values.length)),
  );
}

/** `XGDMatrixSetUIntInfo`, e.g. field `"group"` with query-group sizes. */
export function dmatrixSetUIntInfo(
  dmat: Deno.PointerObject,
  field: string,
  values: Uint32Array,
): void {
  check(
    "XGDMatrixSetUIntInfo",
    xgboostLibrary().XGDMatrixSetUIntInfo(dmat, cString(field), values, BigInt(values.length)),
  );
}

/** `XGDMatrixFree`. */
export function dmatrixFree(dmat: Deno.PointerObject): void {
  check("XGDMatrixFree", xgboostLibrary().XGDMatrixFree(dmat));
}

/** `XGBoosterCreate`: a booster caching predictions for `cache` (may be empty). */
export function boosterCreate(cache: Deno.PointerObject[] = []): Deno.PointerObject {
  const dmats = new BigUint64Array(Math.max(1, cache.length));
  cache.forEach((d, i) => dmats[i] = BigInt(Deno.UnsafePointer.value(d)));
  const out = new BigUint64Array(1);
  check(
    "XGBoosterCreate",
    xgboostLibrary().XGBoosterCreate(dmats, BigInt(cache.length), out),
  );
  return handleOf("XGBoosterCreate", out);
}

/** `XGBoosterFree`. */
export function boosterFree(booster: Deno.PointerObject): void {
  check("XGBoosterFree", xgboostLibrary().XGBoosterFree(booster));
}

/** `XGBoosterSetParam` (values are strings to XGBoost). */
export function boosterSetParam(booster: Deno.PointerObject, name: string, value: string): void {
  check(
    "XGBoosterSetParam",
    xgboostLibrary().XGBoosterSetParam(booster, cString(name), cString(value)),
  );
}

/** `XGBoosterUpdateOneIter`: one boosting round on `dtrain`. */
export function boosterUpdateOneIter(
  booster: Deno.PointerObject,
  iter: number,
  dtrain: Deno.PointerObject,
): void {
  check("XGBoosterUpdateOneIter", xgboostLibrary().XGBoosterUpdateOneIter(booster, iter, dtrain));
}

/**
 * `XGBoosterPredict` (normal prediction, all trees, not training), copied out
 * of XGBoost's buffer (which the next call on the booster reuses).
 */
export function boosterPredict(
  booster: Deno.PointerObject,
  dmat: Deno.PointerObject,
): Float32Array {
  const outLen = new BigUint64Array(1);
  const outPtr = new BigUint64Array(1);
  check(
    "XGBoosterPredict",
    xgboostLibrary().XGBoosterPredict(booster, dmat, 0, 0, 0, outLen, outPtr),
  );
  const n = Number(outLen[0]);
  const result = new Float32Array(n);
  if (n === 0) return result;
  const ptr = Deno.UnsafePointer.create(outPtr[0]);
  if (ptr === null) throw new XGBoostError("XGBoosterPredict", 0, "returned a null result");
  new Deno.UnsafePointerView(ptr).copyInto(result);
  return result;
}

/** `XGBoosterSaveModel`: JSON when `path` ends `.json`, UBJSON for `.ubj`, else binary. */
export function boosterSaveModel(booster: Deno.PointerObject, path: string): void {
  check("XGBoosterSaveModel", xgboostLibrary().XGBoosterSaveModel(booster, cString(path)));
}

/** `XGBoosterLoadModel` (format detected from the file). */
export function boosterLoadModel(booster: Deno.PointerObject, path: string): void {
  check("XGBoosterLoadModel", xgboostLibrary().XGBoosterLoadModel(booster, cString(path)));
}

/** `XGBoosterBoostedRounds`: rounds trained so far. */
export function boosterBoostedRounds(booster: Deno.PointerObject): number {
  const out = new Int32Array(1);
  check("XGBoosterBoostedRounds", xgboostLibrary().XGBoosterBoostedRounds(booster, out));
  return out[0];
}

/** `XGBoosterGetNumFeature`: columns the model was trained on. */
export function boosterNumFeature(booster: Deno.PointerObject): number {
  const out = new BigUint64Array(1);
  check("XGBoosterGetNumFeature", xgboostLibrary().XGBoosterGetNumFeature(booster, out));
  return Number(out[0]);
}

/** `XGBoosterSaveJsonConfig`: the booster's configuration (parameters) as JSON text. */
export function boosterJsonConfig(booster: Deno.PointerObject): string {
  const outLen = new BigUint64Array(1);
  const outPtr = new BigUint64Array(1);
  check(
    "XGBoosterSaveJsonConfig",
    xgboostLibrary().XGBoosterSaveJsonConfig(booster, outLen, outPtr),
  );
  const ptr = Deno.UnsafePointer.create(outPtr[0]);
  if (ptr === null) return "{}";
  const bytes = new Uint8Array(Number(outLen[0]));
  new Deno.UnsafePointerView(ptr).copyInto(bytes);
  return new TextDecoder().decode(bytes);
}
