// The @a2a-js/sdk peers of a scenario: its server with the InMemoryTaskStore (on Bun and Node) and with its own
// DatabaseTaskStore on PostgreSQL (Bun and Node) and on SQLite (Node: better-sqlite3 does not load in Bun). A store
// whose database is not available is skipped with a note; the others still run.
import { type Compared, type Contender, compare, cpuNote, type Load, sdkContender } from "./contenders.ts";
import { type BenchContext, pick } from "./context.ts";
import type { PeerEngine } from "./peer-databases.ts";
import { fmt, type Row } from "./results.ts";
import { type PeerMode, type PeerRuntime, peerCommand } from "./sdk-peer.ts";
import { packageVersion } from "./versions.ts";

/** How the durable peers are set up, for a scenario's setup list. */
export const DURABLE_PEERS_SETUP = [
  "Durable peers: the same server with the SDK's own `DatabaseTaskStore` (Kysely) as its persistent-stores guide sets it up: PostgreSQL through `pg.Pool` with its defaults (10 connections), SQLite through better-sqlite3 on a file (Node only: better-sqlite3 does not load in Bun). Each round gets a fresh database whose table `a2a-db upgrade` (the SDK's migration tool) created.",
  "The bench starts its own PostgreSQL (Debian's binaries, a temporary data directory, a free loopback port) with fsync, synchronous_commit and full_page_writes off, and SQLite runs with journal_mode=WAL and synchronous=OFF: like the bench's redis-server (no RDB, no AOF), no system waits for the disk. The PostgreSQL processes' CPU counts as the peer's.",
];

export type PeerStore = "memory" | PeerEngine;

export interface SdkPeer {
  /** The contender's name, e.g. "sdk-postgres-node". */
  name: string;
  runtime: PeerRuntime;
  store: PeerStore;
}

export interface SdkPeerSet {
  peers: SdkPeer[];
  contenders: Contender[];
  /** Why a peer is missing, for the report. */
  notes: string[];
}

/** The store argument of sdk-server as the report shows it (each round creates its own database). */
const STORE_ARGUMENT: Record<PeerStore, string> = {
  memory: "memory",
  postgres: "postgresql://bench@127.0.0.1:<port>/<fresh database>",
  sqlite: "sqlite:<fresh file>",
};

const RUNTIMES: Record<PeerStore, PeerRuntime[]> = {
  memory: ["bun", "node"],
  postgres: ["bun", "node"],
  sqlite: ["node"],
};

/** Every SDK peer that can run here, in the order they alternate. */
export async function sdkPeers(context: BenchContext, mode: PeerMode): Promise<SdkPeerSet> {
  const notes: string[] = [];
  const server = await context.databases.server();
  if (typeof server === "string") notes.push(`The SDK peer on PostgreSQL was skipped: ${server}.`);
  const peers: SdkPeer[] = [];
  for (const store of ["memory", "postgres", "sqlite"] as const) {
    if (store === "postgres" && typeof server === "string") continue;
    for (const runtime of RUNTIMES[store]) {
      peers.push({ name: store === "memory" ? `sdk-${runtime}` : `sdk-${store}-${runtime}`, runtime, store });
    }
  }
  const contenders = peers.map((peer) =>
    sdkContender(context, peer.runtime, mode, peer.store === "memory" ? undefined : peer.store),
  );
  return { peers, contenders, notes };
}

/** The store as the report names it. */
export function storeLabel(store: PeerStore, postgresVersion = ""): string {
  if (store === "memory") return "InMemoryTaskStore";
  if (store === "postgres") return `DatabaseTaskStore on PostgreSQL${postgresVersion ? ` ${postgresVersion}` : ""}`;
  return `DatabaseTaskStore on SQLite (better-sqlite3 ${packageVersion("better-sqlite3")})`;
}

/** The PostgreSQL server's version number ("15.19"), or "" when it did not start. */
export async function postgresVersion(context: BenchContext): Promise<string> {
  const server = await context.databases.server();
  return typeof server === "string" ? "" : (/(\d+(?:\.\d+)*)/.exec(server.version)?.[1] ?? "");
}

export function peerRow(
  peer: SdkPeer,
  compared: Compared,
  unit: string,
  mode: PeerMode,
  only: string,
  pgVersion: string,
): Row {
  const runtime = peer.runtime === "bun" ? "Bun" : "Node";
  const database = peer.store === "postgres" ? "; server = SDK process + PostgreSQL processes" : "";
  return {
    system: `@a2a-js/sdk server on ${runtime} (${storeLabel(peer.store, pgVersion)})`,
    role: "peer",
    summary: compared.summary,
    unit,
    errors: compared.summary.errors,
    command: `npm run bench -- --only ${only}  (peer: ${peerCommand(peer.runtime, mode, STORE_ARGUMENT[peer.store])})`,
    note: `${cpuNote(compared)}${database}`,
  };
}

export interface BestPeer {
  peer: SdkPeer;
  compared: Compared;
  row: Row;
}

/** For each store measured, its fastest runtime (by throughput): the peer a ratio is taken against. */
export function bestPerStore(peers: readonly SdkPeer[], results: Map<string, Compared>, rows: Row[]): BestPeer[] {
  const best = new Map<PeerStore, BestPeer>();
  peers.forEach((peer, index) => {
    const compared = results.get(peer.name);
    const row = rows[index];
    if (!compared || !row) return;
    const current = best.get(peer.store);
    if (!current || compared.summary.perSecond > current.compared.summary.perSecond) {
      best.set(peer.store, { peer, compared, row });
    }
  });
  return [...best.values()];
}

/** "2.10× (5,000 vs 2,380 accepts/s, <system>)": ours against one peer. */
export function ratioText(ours: number, peer: BestPeer, unit: string): string {
  const theirs = peer.compared.summary.perSecond;
  return `${(ours / theirs).toFixed(2)}× (${fmt(ours)} vs ${fmt(theirs)} ${unit}, ${peer.row.system})`;
}

export interface PeerComparison {
  ours: Compared;
  /** One row per SDK peer, in sdkPeers' order. */
  peerRows: Row[];
  /** Each store's fastest runtime. */
  best: BestPeer[];
  /** The SDK's in-memory server (its fastest runtime): the peer of the targets. */
  inMemory: BestPeer;
  pgVersion: string;
  notes: string[];
}

/** The scenario (its `--only` name) whose peers run in `mode`. */
function scenarioOf(mode: PeerMode): "accept" | "blocking" {
  return mode === "immediate" ? "accept" : "blocking";
}

/** Runs `ours` (named "gateway") and every SDK peer in alternating rounds under `load`. */
export async function compareWithPeers(
  context: BenchContext,
  rounds: number,
  ours: Contender,
  mode: PeerMode,
  load: Load,
  unit: string,
): Promise<PeerComparison> {
  const sdk = await sdkPeers(context, mode);
  const pgVersion = await postgresVersion(context);
  const only = scenarioOf(mode);
  context.log(`${only}: ours vs ${sdk.peers.length} SDK servers`);
  const results = await compare(context, rounds, [ours, ...sdk.contenders], load);
  const peerRows = sdk.peers.map((peer) => peerRow(peer, results.get(peer.name)!, unit, mode, only, pgVersion));
  const best = bestPerStore(sdk.peers, results, peerRows);
  const inMemory = best.find((entry) => entry.peer.store === "memory")!;
  return { ours: results.get(ours.name)!, peerRows, best, inMemory, pgVersion, notes: sdk.notes };
}

/** All CPU per request of a system: its processes and redis-server. */
export function totalCpuUs(compared: Compared): number {
  return compared.serverCpuPerRequestUs + compared.redisCpuPerRequestUs;
}

/** "ours ÷ SDK with <store>" for every store: throughput ratio and CPU per request side by side. */
export function peerFigures(comparison: PeerComparison, unit: string): [string, string][] {
  const { ours, best, pgVersion } = comparison;
  return best.map((entry): [string, string] => [
    `ours ÷ SDK with ${storeLabel(entry.peer.store, pgVersion)}`,
    `${ratioText(ours.summary.perSecond, entry, unit)}; CPU per request (all processes + redis-server): ours ${fmt(totalCpuUs(ours))} µs vs ${fmt(totalCpuUs(entry.compared))} µs`,
  ]);
}

/** How the one-client rows are measured, for a scenario's setup list. */
export const ONE_CLIENT_SETUP =
  "One client: ours and the SDK's in-memory server (its faster runtime above) again with a single connection and one request in flight, fewer requests per round, alternating: each request then wakes every process on its path alone, where the concurrent load lets requests share the wake-ups; no target judges these rows.";

/** Ours and the peer of the targets with one client at a time: rows for the table and a figure line. */
export interface OneClient {
  rows: Row[];
  figure: [string, string];
}

/**
 * Runs `ours` and the SDK's in-memory server (the runtime `comparison` found faster) under `load` with one client
 * at a time, in alternating rounds: every request then wakes each process on its path alone, the case the concurrent
 * loads of the targets do not show.
 */
export async function oneClientComparison(
  context: BenchContext,
  rounds: number,
  ours: { contender: Contender; system: string; note: (compared: Compared) => string },
  comparison: PeerComparison,
  mode: PeerMode,
  load: Load,
  unit: string,
): Promise<OneClient> {
  const single: Load = {
    ...load,
    concurrency: 1,
    ...pick(
      context,
      { maxRequests: 3_000, maxSeconds: 5, warmupRequests: 300 },
      { maxRequests: 800, maxSeconds: 2, warmupRequests: 100 },
    ),
  };
  const { peer } = comparison.inMemory;
  const only = scenarioOf(mode);
  context.log(`${only}: one client, ours vs ${peer.name}`);
  const results = await compare(context, rounds, [ours.contender, sdkContender(context, peer.runtime, mode)], single);
  const mine = results.get(ours.contender.name)!;
  const theirs = results.get(peer.name)!;
  const peerLine = peerRow(peer, theirs, unit, mode, only, comparison.pgVersion);
  const rows: Row[] = [
    {
      system: `${ours.system}, one client`,
      role: "ours",
      summary: mine.summary,
      unit,
      errors: mine.summary.errors,
      command: `npm run bench -- --only ${only}`,
      note: ours.note(mine),
    },
    { ...peerLine, system: `${peerLine.system}, one client` },
  ];
  const ratio = mine.summary.perSecond / theirs.summary.perSecond;
  const figure: [string, string] = [
    "one client at a time: ours ÷ SDK with InMemoryTaskStore",
    `${ratio.toFixed(2)}× (${fmt(mine.summary.perSecond)} vs ${fmt(theirs.summary.perSecond)} ${unit}); CPU per request (all processes + redis-server): ours ${fmt(totalCpuUs(mine))} µs vs ${fmt(totalCpuUs(theirs))} µs`,
  ];
  return { rows, figure };
}
