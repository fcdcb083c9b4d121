/**
 * A feature's first use installs what it needs: `scripts/setup.sh` installs
 * only what the main job uses (`main`); a feature that needs more (PyTorch for
 * bench/network_peers.ts, Redis and PostgreSQL for distributed measurement,
 * the peers of bench/peers.ts) calls {@link ensureSetupGroup}, which runs
 * `bash scripts/setup.sh GROUP` (idempotent: it skips what is installed and
 * says what it installs and why); silent when nothing was missing, else its
 * lines on stderr.
 *
 * `TUNEBOOK_NO_SETUP=1` turns this off (nothing is installed; the feature
 * then reports what is missing, as before).
 * @module
 */
import { join } from "node:path";
import { ROOT } from "./script.ts";

/** Groups of `scripts/setup.sh` a feature may ask for. */
export const SETUP_GROUPS = [
  "main",
  "notebooks",
  "opencl",
  "peers",
  "torch",
  "distributed",
  "browser",
] as const;

/** A group of `scripts/setup.sh`. */
export type SetupGroup = typeof SETUP_GROUPS[number];

/** What {@link ensureSetupGroup} did. */
export interface SetupOutcome {
  /** True when setup.sh ran and exited 0. */
  ran: boolean;
  /** Why it did not run, or how it failed. */
  reason?: string;
}

/**
 * Runs `bash scripts/setup.sh group` once per process for `group`; when it
 * installs something (or fails), its lines go to stderr after one naming
 * `why` (e.g. `"bench/network_peers.ts times the network in PyTorch"`).
 * Never throws: a failed install is returned, and the feature reports what is
 * missing as it would without it.
 *
 * @example
 * ```ts
 * import { ensureSetupGroup } from "./setup_group.ts";
 * Deno.env.set("TUNEBOOK_NO_SETUP", "1");
 * const r = await ensureSetupGroup("torch", "an example");
 * if (r.ran || !r.reason?.includes("TUNEBOOK_NO_SETUP")) throw new Error();
 * Deno.env.delete("TUNEBOOK_NO_SETUP");
 * ```
 */
export async function ensureSetupGroup(group: SetupGroup, why: string): Promise<SetupOutcome> {
  if (!SETUP_GROUPS.includes(group)) {
    throw new RangeError(
      `ensureSetupGroup: group must be one of ${SETUP_GROUPS.join(", ")}, got ${group}`,
    );
  }
  const off = Deno.env.get("TUNEBOOK_NO_SETUP");
  if (off && off !== "0") return { ran: false, reason: "TUNEBOOK_NO_SETUP is set" };
  const done = ensured.get(group);
  if (done) return await done;
  const run = (async (): Promise<SetupOutcome> => {
    try {
      const out = await new Deno.Command("bash", {
        args: [join(ROOT, "scripts", "setup.sh"), group],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        env: { CI: Deno.env.get("CI") ?? "true" },
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      // Silent when everything was there; otherwise what was installed (or failed) and why.
      const said = text.split("\n").filter((l) => l && !/\] (skip|done)/.test(l));
      if (said.length > 0 || !out.success) {
        console.error(`tunebook: ${why}: bash scripts/setup.sh ${group}`);
        for (const line of said) console.error(line);
      }
      return out.success ? { ran: true } : {
        ran: false,
        reason: `scripts/setup.sh ${group} exited ${out.code}`,
      };
    } catch (e) {
      return { ran: false, reason: `cannot run bash scripts/setup.sh: ${(e as Error).message}` };
    }
  })();
  ensured.set(group, run);
  return await run;
}

const ensured = new Map<SetupGroup, Promise<SetupOutcome>>();
