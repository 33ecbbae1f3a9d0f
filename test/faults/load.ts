// Shared pieces of the fault scenarios: the load size (quick for CI, larger with A2A_SOAK=1), a seeded random source,
// bounded concurrency, and the figures each scenario prints for RELIABILITY.md.
import type { Redis } from "ioredis";
import { waitFor } from "../integration/actors/harness.ts";

/** True for the documented soak run (`A2A_SOAK=1 bun run soak`). */
export const SOAK = process.env.A2A_SOAK === "1";

/** `quick` tasks in CI, `soak` tasks in the soak run. */
export function load(quick: number, soak: number): number {
  return SOAK ? soak : quick;
}

/** A time budget (ms) for `quick`-sized work, ten times longer in the soak run. */
export function scaled(ms: number): number {
  return SOAK ? ms * 10 : ms;
}

/** mulberry32: a small seeded generator, so a failing run can be replayed with its seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: A2A_FAULT_SEED when set, else the clock (printed so it can be replayed). */
export function runSeed(): number {
  return Number(process.env.A2A_FAULT_SEED ?? Date.now() % 1_000_000);
}

export { pool } from "../support/pool.ts";

/** Prints one scenario's figures as a JSON line (RELIABILITY.md quotes them). */
export function figures(scenario: string, values: Record<string, unknown>): void {
  console.log(`FIGURES ${JSON.stringify({ scenario, soak: SOAK, ...values })}`);
}

/** The state of each task, read from Redis in one pipeline. */
export async function states(redis: Redis, taskKeys: readonly string[]): Promise<(string | null)[]> {
  const pipeline = redis.pipeline();
  for (const key of taskKeys) pipeline.hget(key, "state");
  const answers = (await pipeline.exec()) ?? [];
  return answers.map(([, value]) => (typeof value === "string" ? value : null));
}

/** The p-th percentile (0..100) of `values`, in their unit. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * Waits until every task in `taskKeys` is terminal; returns their states. On timeout the error gives the states'
 * counts and the last lines of `lines` (the supervisor's output).
 */
export async function settleAll(
  redis: Redis,
  taskKeys: readonly string[],
  timeoutMs: number,
  lines: readonly string[],
): Promise<(string | null)[]> {
  let last: (string | null)[] = [];
  return await waitFor(
    async () => {
      last = await states(redis, taskKeys);
      return last.every((s) => s && /COMPLETED|FAILED|CANCELED|REJECTED/.test(s)) ? last : undefined;
    },
    timeoutMs,
    () => {
      const counts: Record<string, number> = {};
      for (const s of last) counts[String(s)] = (counts[String(s)] ?? 0) + 1;
      return `every task terminal; states ${JSON.stringify(counts)}; supervisor:\n${lines.slice(-15).join("\n")}`;
    },
  );
}
