// GET /healthz (the process answers) and GET /readyz (Redis answers and every shard has a worker beat younger than
// worker.livenessSeconds, measured on Redis's clock, which is what accept checks too).
import { WorkerRegistry } from "../journal/index.ts";
import type { GatewayContext } from "./gateway-context.ts";

/** How long /readyz waits for Redis before it calls it unreachable, in ms. */
export const READY_TIMEOUT_MS = 1000;

export interface ShardReadiness {
  shard: number;
  /** Seconds since the last worker beat or sweep tick; null when none is recorded. */
  beatAgeSeconds: number | null;
  live: boolean;
}

export interface Readiness {
  ready: boolean;
  redis: "ok" | "unreachable";
  livenessSeconds: number;
  shards: ShardReadiness[];
}

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}

export function healthz(): Response {
  return json({ status: "ok" }, 200);
}

async function probe(context: GatewayContext): Promise<Readiness> {
  const livenessSeconds = context.config.worker.livenessSeconds;
  const { nowSeconds, beats } = await new WorkerRegistry(context.redis, context.keys).shardBeats();
  const shards: ShardReadiness[] = [];
  for (let shard = 0; shard < context.keys.shards; shard++) {
    const beat = beats[shard] ?? null;
    const age = beat === null ? null : nowSeconds - beat;
    shards.push({ shard, beatAgeSeconds: age, live: age !== null && age <= livenessSeconds });
  }
  return { ready: shards.every((s) => s.live), redis: "ok", livenessSeconds, shards };
}

/** 200 when ready, else 503; the body says which part is missing. */
export async function readyz(context: GatewayContext): Promise<Response> {
  const livenessSeconds = context.config.worker.livenessSeconds;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), READY_TIMEOUT_MS);
  });
  try {
    const readiness = await Promise.race([probe(context), timeout]);
    return json(readiness, readiness.ready ? 200 : 503);
  } catch {
    return json({ ready: false, redis: "unreachable", livenessSeconds, shards: [] } satisfies Readiness, 503);
  } finally {
    clearTimeout(timer);
  }
}
