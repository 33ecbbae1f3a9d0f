// What every scenario gets from the bench: the redis-server it started, the durable peers' databases, whether this is a
// quick run, and a logger.
import type { PeerDatabases } from "./peer-databases.ts";

export interface BenchContext {
  readonly redisUrl: string;
  /** The same redis-server's Unix socket (unix:///…/redis.sock), for the rows of a Redis on the same host. */
  readonly redisSocketUrl: string;
  /** The redis-server's pid (INFO server), for its CPU time. */
  readonly redisPid: number;
  /** PostgreSQL (started on first use) and SQLite files for the SDK's DatabaseTaskStore peers. */
  readonly databases: PeerDatabases;
  /** `--quick`: smaller counts and one round: every scenario checked in a few minutes. */
  readonly quick: boolean;
  log(line: string): void;
}

/** `full` in a full run, `quick` with --quick. */
export function pick<T>(context: BenchContext, full: T, quick: T): T {
  return context.quick ? quick : full;
}
