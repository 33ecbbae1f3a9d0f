// An installation for the per-client bounds: the real gateway and supervisor as child processes, with an echo profile
// of its own (retention, input timeout) and loopback webhooks allowed; helpers that read Redis's clock and memory.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { type Installation, installation } from "../multi/installation.ts";

export interface TenancyInstallation {
  inst: Installation;
  close(): Promise<void>;
}

/**
 * An installation whose echo profile has `profile` on top (e.g. retentionSeconds, inputTimeoutSeconds); `allowHosts`
 * lets webhooks reach loopback receivers (`127.0.0.1:<port>`).
 */
export async function tenancyInstallation(
  redisUrl: string,
  profile: Record<string, unknown>,
  env: Record<string, string> = {},
  allowHosts: readonly string[] = [],
): Promise<TenancyInstallation> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-tenancy-"));
  const config = join(dir, "config.json");
  const echo = {
    name: "echo",
    handler: "echo",
    description: "Echoes the text it receives.",
    skill: { id: "echo", name: "Echo", description: "Answers with the text it got." },
    // the tests read finished tasks' journals, which the default (0 s) deletes with the terminal step
    journalRetentionSeconds: 600,
    ...profile,
  };
  writeFileSync(config, JSON.stringify({ profiles: [echo], push: { allowHosts } }));
  const inst = await installation({ redisUrl, env: { A2A_CONFIG: config, ...env } });
  return {
    inst,
    async close() {
      await inst.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Redis's clock in ms: the clock every due time and lease is compared with. */
export async function redisNowMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Redis's `used_memory` (bytes). */
export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}
