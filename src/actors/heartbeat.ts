// A worker's heartbeat, readable with redis-cli: a hash per worker with a TTL, an index of workers by last beat, and
// the per-shard liveness record that the gateway's accept script checks (written in Redis time).
import { type KeySpace, type RedisLike, type RunLedger, type WorkerRecord, WorkerRegistry } from "../journal/index.ts";
import type { Logger } from "../log.ts";

export type WorkerMode = WorkerRecord["mode"];

export interface HeartbeatOptions {
  redis: RedisLike;
  keys: KeySpace;
  ledger: RunLedger;
  workerId: string;
  mode: WorkerMode;
  host: string;
  pid: number;
  version: string;
  heartbeatSeconds: number;
  livenessSeconds: number;
  /** Runs in flight and runs done, read at each beat. */
  stats: () => { inflight: number; done: number };
  logger: Logger;
}

/** How long a heartbeat hash outlives its last beat: three intervals, and at least the liveness window. */
export function heartbeatTtlSeconds(heartbeatSeconds: number, livenessSeconds: number): number {
  return Math.max(3 * heartbeatSeconds, livenessSeconds);
}

export class Heartbeat {
  private readonly started = new Date().toISOString();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly registry: WorkerRegistry;

  constructor(private readonly o: HeartbeatOptions) {
    this.registry = new WorkerRegistry(o.redis, o.keys);
  }

  /** Records one beat: the worker hash (with TTL), its score in the workers index, and every shard's live record. */
  async beat(): Promise<void> {
    const { keys, workerId } = this.o;
    const now = Date.now();
    const ttl = heartbeatTtlSeconds(this.o.heartbeatSeconds, this.o.livenessSeconds);
    const { inflight, done } = this.o.stats();
    const record = {
      mode: this.o.mode,
      pid: this.o.pid,
      host: this.o.host,
      started: this.started,
      beat: new Date(now).toISOString(),
      inflight,
      done,
      version: this.o.version,
    };
    await this.registry.record(workerId, record, now, ttl);
    const shards = Array.from({ length: keys.shards }, (_, shard) => shard);
    await Promise.all(shards.map((shard) => this.o.ledger.beat(shard, this.o.livenessSeconds)));
  }

  /** Beats now and then every heartbeatSeconds; a failed beat is logged and retried at the next interval. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => {
      this.beat().catch((error: unknown) => this.o.logger.warn({ err: error }, "heartbeat failed"));
    }, this.o.heartbeatSeconds * 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Removes this worker's hash and index entry (a clean exit; the shard live records keep their TTL). */
  async remove(): Promise<void> {
    this.stop();
    await this.registry.remove(this.o.workerId);
  }
}
