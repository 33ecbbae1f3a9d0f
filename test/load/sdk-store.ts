// The task store of the SDK peer: its InMemoryTaskStore, or its own DatabaseTaskStore (Kysely) on PostgreSQL or SQLite,
// set up as the SDK's persistent-stores guide shows: one Kysely instance, `pg.Pool` with its defaults, better-sqlite3 on
// a file. The table is created beforehand by the SDK's `a2a-db upgrade`. Drivers load only when their store is asked for.
import { InMemoryTaskStore, type TaskStore } from "@a2a-js/sdk/server";

/** `memory`, a `postgresql://` URL, or `sqlite:<file>`. */
export async function taskStoreFor(spec: string): Promise<TaskStore> {
  if (spec === "memory") return new InMemoryTaskStore();
  const { Kysely, PostgresDialect, SqliteDialect } = await import("kysely");
  const { DatabaseTaskStore } = await import("@a2a-js/sdk/server/database");
  if (spec.startsWith("postgresql://")) {
    const { default: pg } = await import("pg");
    return new DatabaseTaskStore(
      new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: spec }) }) }),
    );
  }
  if (spec.startsWith("sqlite:")) {
    const { default: SQLite } = await import("better-sqlite3");
    const database = new SQLite(spec.slice("sqlite:".length));
    // Like the bench's redis-server (no RDB, no AOF) and its PostgreSQL (fsync off), the peer never waits for the disk.
    database.pragma("journal_mode = WAL");
    database.pragma("synchronous = OFF");
    return new DatabaseTaskStore(new Kysely({ dialect: new SqliteDialect({ database }) }));
  }
  throw new Error(`unknown task store "${spec}": expected memory, postgresql://… or sqlite:<file>`);
}
