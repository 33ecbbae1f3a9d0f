// The databases of the durable SDK peers: a PostgreSQL server of the bench's own (Debian's binaries, a temporary data
// directory, a free loopback port; skipped with a reason when the binaries are missing) and SQLite files. Each round of
// a peer gets a fresh database, migrated by the SDK's own `a2a-db upgrade`, and dropped after the round.
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../support/redis.ts";
import { type Child, childrenOf, startChild } from "./processes.ts";

/** Where Debian installs PostgreSQL's server binaries, one folder per major version. */
const POSTGRES_ROOT = "/usr/lib/postgresql";
const A2A_DB = new URL("../../node_modules/@a2a-js/sdk/dist/cli/a2a_db.js", import.meta.url).pathname;
/** The user PostgreSQL runs as when the bench runs as root (initdb and postgres refuse root). */
const SERVICE_USER = "postgres";

/** A database of one round: the URL the peer connects to, and how to throw it away. */
export interface PeerDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** The engines a durable peer runs on, as the report names them. */
export type PeerEngine = "postgres" | "sqlite";

/** The newest PostgreSQL server binaries under /usr/lib/postgresql/<major>/bin, or undefined. */
function postgresBin(): string | undefined {
  if (!existsSync(POSTGRES_ROOT)) return undefined;
  const majors = readdirSync(POSTGRES_ROOT)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(POSTGRES_ROOT, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(POSTGRES_ROOT, majors[0], "bin");
}

/** ids of a user from /usr/bin/id, or undefined when the user does not exist. */
function idsOf(user: string): { uid: number; gid: number } | undefined {
  const uid = spawnSync("id", ["-u", user], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", user], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Runs `a2a-db upgrade --store tasks` (the SDK's migration tool) on Node against `url`. */
function migrate(url: string): void {
  const run = spawnSync("node", [A2A_DB, "upgrade", "--store", "tasks", "--url", url], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`a2a-db upgrade failed for ${url}: ${run.stderr || run.stdout}`);
}

export class PostgresServer {
  private constructor(
    readonly version: string,
    readonly port: number,
    private readonly child: Child,
    private readonly dir: string,
    private readonly admin: pg.Client,
  ) {}

  /**
   * initdb in a temporary directory, then `postgres` on a free loopback port, run as the `postgres` user when the
   * bench is root. Without fsync, synchronous commit or full-page writes: like the bench's redis-server (no RDB, no
   * AOF), the peer never waits for the disk. Returns a reason instead when it cannot start.
   */
  static async start(): Promise<PostgresServer | string> {
    const bin = postgresBin();
    if (!bin) return `no PostgreSQL server binaries under ${POSTGRES_ROOT}/*/bin`;
    const dir = mkdtempSync(join(tmpdir(), "a2a-bench-pg-"));
    let prefix: string[] = [];
    if (userInfo().uid === 0) {
      const ids = idsOf(SERVICE_USER);
      if (!ids) {
        rmSync(dir, { recursive: true, force: true });
        return `running as root and no "${SERVICE_USER}" user to run PostgreSQL as`;
      }
      chownSync(dir, ids.uid, ids.gid);
      prefix = ["setpriv", `--reuid=${ids.uid}`, `--regid=${ids.gid}`, "--init-groups", "--"];
    }
    const data = join(dir, "data");
    const env = { PATH: process.env.PATH ?? "", LANG: "C" };
    const init = spawnSync(
      prefix[0] ?? join(bin, "initdb"),
      [
        ...prefix.slice(1),
        ...(prefix.length > 0 ? [join(bin, "initdb")] : []),
        "-D",
        data,
        "-A",
        "trust",
        "-U",
        "bench",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
      ],
      { encoding: "utf8", env, timeout: 120_000 },
    );
    if (init.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      return `initdb failed: ${(init.stderr || String(init.error)).trim().split("\n").at(-1)}`;
    }
    const version = (spawnSync(join(bin, "postgres"), ["--version"], { encoding: "utf8" }).stdout ?? "").trim();
    const port = await freePort();
    const settings = {
      listen_addresses: "127.0.0.1",
      port: String(port),
      unix_socket_directories: dir,
      fsync: "off",
      synchronous_commit: "off",
      full_page_writes: "off",
    };
    const args = [
      join(bin, "postgres"),
      "-D",
      data,
      ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
    ];
    const child = startChild("postgres", [...prefix, ...args], env);
    try {
      await child.line(/database system is ready to accept connections/, 60_000);
      const admin = new pg.Client({ host: "127.0.0.1", port, user: "bench", database: "postgres" });
      // A server killed under it (the bench kills every child after a failed scenario) ends the connection with an
      // error event, which would otherwise end the bench itself; server() starts a new server on next use.
      admin.on("error", () => {});
      await admin.connect();
      return new PostgresServer(version, port, child, dir, admin);
    } catch (error) {
      await child.stop(5_000);
      rmSync(dir, { recursive: true, force: true });
      return `postgres did not start: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`;
    }
  }

  /** A new, empty database with the SDK's task table (a2a-db upgrade), dropped by `drop()`. */
  async database(name: string): Promise<PeerDatabase> {
    await this.admin.query(`CREATE DATABASE ${name}`);
    const url = `postgresql://bench@127.0.0.1:${this.port}/${name}`;
    migrate(url);
    return {
      url,
      drop: async () => {
        await this.admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }

  /** The postmaster and its children (backends, writers), whose CPU is the database's share of a peer's. */
  pids(): number[] {
    return [this.child.pid, ...childrenOf(this.child.pid)];
  }

  running(): boolean {
    return this.child.process.exitCode === null && this.child.process.signalCode === null;
  }

  /** Fast shutdown (SIGINT), then the data directory is removed. */
  async stop(): Promise<void> {
    await this.admin.end().catch(() => {});
    if (this.child.process.exitCode === null) this.child.process.kill("SIGINT");
    await this.child.stop(15_000);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

let files = 0;

/** A new SQLite file with the SDK's task table, deleted by `drop()`. */
export function sqliteDatabase(): PeerDatabase {
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-sqlite-"));
  files += 1;
  const url = `sqlite:${join(dir, `peer-${files}.db`)}`;
  migrate(url);
  return {
    url,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The durable peers' databases for one bench run: PostgreSQL started on first use, stopped by `stop()`. */
export class PeerDatabases {
  private postgres: Promise<PostgresServer | string> | undefined;
  private created = 0;

  /**
   * The PostgreSQL server, or the reason it is not available (then the PostgreSQL peer is skipped). A server that
   * died (the bench kills every child after a failed scenario) is started again.
   */
  async server(): Promise<PostgresServer | string> {
    const current = await this.postgres;
    if (current === undefined || (typeof current !== "string" && !current.running())) {
      if (current !== undefined && typeof current !== "string") await current.stop();
      this.postgres = PostgresServer.start();
    }
    return (await this.postgres) ?? "not started";
  }

  /** A fresh database of `engine` for one round. */
  async fresh(engine: PeerEngine): Promise<PeerDatabase> {
    if (engine === "sqlite") return sqliteDatabase();
    const server = await this.server();
    if (typeof server === "string") throw new Error(`PostgreSQL is not available: ${server}`);
    this.created += 1;
    return server.database(`bench_${this.created}`);
  }

  async stop(): Promise<void> {
    const server = await this.postgres;
    if (server && typeof server !== "string") await server.stop();
  }
}
