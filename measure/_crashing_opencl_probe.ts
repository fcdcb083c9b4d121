/**
 * A build probe for tests (`OpenCLRuntime.open({ buildProbe })`): aborts, as
 * an LLVM assertion aborts PoCL, when the source holds a kernel named
 * `p1_*` (the second program of a `checkGpuSchedules` batch); otherwise
 * reports the source built and leaves the build to the caller.
 * @module
 */
if (import.meta.main) {
  const source = Deno.readTextFileSync(Deno.args[0]);
  if (/__kernel void p1_/.test(source)) {
    console.error("Could not find a dominating alternative variable (a test's stand-in)");
    Deno.kill(Deno.pid, "SIGABRT");
  }
}
