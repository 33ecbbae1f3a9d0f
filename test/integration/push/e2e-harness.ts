// Harness of the push end-to-end tests: an installation on a real redis-server, the gateway and the supervisor
// (`a2a-runtime work`) as child processes, and loopback receivers that record which process opened each connection
// (read with `ss -tnp` while the request is open), so a test can show that only actor processes send webhooks.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import type { TestRedis } from "../../support/redis.ts";
import { waitFor } from "../actors/harness.ts";
import { READY_MARK } from "./gateway-process.ts";

const run = promisify(execFile);
const GATEWAY_ENTRY = new URL("./gateway-process.ts", import.meta.url).pathname;
const CLI = new URL("../../../src/cli.ts", import.meta.url).pathname;

export const SECRET = "whsec_ZTJlLXB1c2gtdGVzdHMtc2lnbmluZy1rZXktMDE=";
export const TOKEN = "tok-e2e-4d1c";
export const CREDENTIALS = "cred-e2e-b27e";

export interface E2eInstallation {
  f: JournalFixture;
  dir: string;
  env: Record<string, string>;
  /** The client's API key (for the gateway) and id. */
  key: string;
  clientId: string;
}

/**
 * An installation of its own: a key prefix, a config file (echo profile, a signing secret, and 127.0.0.1 allow-listed
 * on the ports of `receivers` only).
 */
export async function e2eInstallation(
  server: TestRedis,
  receivers: readonly { port: number }[],
): Promise<E2eInstallation> {
  const f = journalFixture(server);
  const dir = mkdtempSync(join(tmpdir(), "a2a-push-e2e-"));
  const file = join(dir, "config.json");
  const echo = {
    name: "echo",
    handler: "echo",
    description: "Echoes.",
    skill: { id: "echo", name: "Echo", description: "Echoes." },
    // the tests compare deliveries with the finished task's journal, which the default (0 s) deletes at its end
    journalRetentionSeconds: 600,
  };
  const allowHosts = receivers.map((receiver) => `127.0.0.1:${receiver.port}`);
  const push = { allowHosts, signingSecrets: [SECRET], timeoutSeconds: 2, maxAttempts: 8 };
  writeFileSync(file, JSON.stringify({ profiles: [echo], push }));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  Object.assign(env, {
    A2A_CONFIG: file,
    A2A_REDIS_URL: server.url,
    A2A_REDIS_KEY_PREFIX: f.prefix,
    A2A_SERVER_HOST: "127.0.0.1",
    A2A_WORKER_HEARTBEAT_SECONDS: "1",
    A2A_WORKER_LIVENESS_SECONDS: "5",
    A2A_WORKER_LEASE_SECONDS: "2",
    A2A_WORKER_DRAIN_SECONDS: "1",
    A2A_LOG_LEVEL: "warn",
  });
  const { record, apiKey } = await f.clients.add({ name: "push-e2e" });
  return { f, dir, env, key: apiKey, clientId: record.id };
}

export function removeInstallation(inst: E2eInstallation): void {
  rmSync(inst.dir, { recursive: true, force: true });
}

export interface Child {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every line written to stdout and stderr so far. */
  readonly lines: string[];
  readonly exited: Promise<void>;
  /** The first line (past or future) matching `pattern`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

const children = new Set<ChildProcess>();

/** Runs `bun <entry> <args>` with the installation's environment. */
export function startChild(inst: E2eInstallation, entry: string, args: string[] = []): Child {
  const child = spawn(process.execPath, [entry, ...args], { env: inst.env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = "";
    stream?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts);
    });
  }
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  void exited.then(() => children.delete(child));
  return {
    child,
    pid: child.pid ?? 0,
    lines,
    exited,
    line: (pattern, timeoutMs = 15_000) =>
      waitFor(
        async () => lines.find((line) => pattern.test(line)),
        timeoutMs,
        () => `${pattern} in ${lines.join("\n")}`,
      ),
  };
}

/** Stops every child this harness started: SIGTERM, then SIGKILL for what did not exit within 3 s. */
export async function stopChildren(): Promise<void> {
  const running = [...children];
  for (const child of running) child.kill("SIGTERM");
  const deadline = Date.now() + 3000;
  while (children.size > 0 && Date.now() < deadline) await Bun.sleep(50);
  for (const child of children) child.kill("SIGKILL");
  children.clear();
}

/** `a2a-runtime work --actors <n>`: the supervisor and its actor processes. */
export function startWork(inst: E2eInstallation, actors = 1): Child {
  return startChild(inst, CLI, ["work", "--actors", String(actors)]);
}

/** `a2a-runtime status --json`, parsed. */
export async function statusJson(inst: E2eInstallation): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [CLI, "status", "--json", "--minimum-workers", "0"], {
    env: inst.env,
  });
  const line = stdout.split("\n").find((text) => text.startsWith("{") && text.includes('"pushPending"'));
  return JSON.parse(line ?? "{}") as Record<string, unknown>;
}

export interface GatewayProcess {
  url: string;
  pid: number;
  /** Project modules the gateway process loaded (paths under src/). */
  modules: string[];
  process: Child;
}

/** Starts the gateway as a child process of its own and waits for its READY line. */
export async function startGatewayProcess(inst: E2eInstallation): Promise<GatewayProcess> {
  const child = startChild(inst, GATEWAY_ENTRY);
  const line = await child.line(new RegExp(`^${READY_MARK}`), 15_000);
  const ready = JSON.parse(line.slice(READY_MARK.length)) as { url: string; pid: number; modules: string[] };
  return { ...ready, process: child };
}

/** Every process descended from this test process (the gateway, the supervisor, its actors, a sweep, …). */
function descendants(): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  const found: number[] = [];
  const pending = [process.pid];
  while (pending.length > 0) {
    const parent = pending.pop() as number;
    for (const [pid, ppid] of parents) {
      if (ppid !== parent) continue;
      found.push(pid);
      pending.push(pid);
    }
  }
  return found;
}

/** Whether process `pid` holds the socket with inode `inode` among its file descriptors. */
function holdsSocket(pid: number, inode: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * The pid of the process that owns the client end of a TCP connection from local port `port` to `peerPort`: `ss`
 * gives the socket's inode (both ports are named: another connection may use the same ephemeral port towards another
 * server), then the file descriptors of this test's descendant processes are searched for it. Undefined when no
 * descendant holds it.
 */
export async function socketOwner(port: number, peerPort: number): Promise<number | undefined> {
  const filter = `( sport = :${port} and dport = :${peerPort} )`;
  const { stdout } = await run("ss", ["-tnHe", "state", "established", filter]);
  const inode = /ino:(\d+)/.exec(stdout)?.[1];
  if (inode === undefined || inode === "0") return undefined;
  return descendants().find((pid) => holdsSocket(pid, inode));
}

export interface Delivered {
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
  /** The process that opened the connection, read while the request was open. */
  ownerPid: number | undefined;
  /** The status answered (undefined while held open). */
  status?: number;
}

export interface ObservingReceiver {
  port: number;
  url: string;
  requests: Delivered[];
  /** Answers later requests with `answer` (a receiver may be started before the test that decides how it answers). */
  answerWith(answer: Answerer): void;
  close(): Promise<void>;
}

/** How to answer the request number `index` (0-based): a status, or `hang` to never answer. */
export type Answerer = (request: Delivered, index: number) => { status?: number; hang?: boolean };

/** A webhook receiver on 127.0.0.1 and a free port that records, for each request, the pid of its sender. */
export async function observingReceiver(initial: Answerer = () => ({})): Promise<ObservingReceiver> {
  const requests: Delivered[] = [];
  let answer = initial;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const delivered: Delivered = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        url: req.url ?? "",
        ownerPid: undefined,
      };
      requests.push(delivered);
      const reply = answer(delivered, requests.length - 1);
      // Looked up while the connection is open (the answer waits for it).
      delivered.ownerPid = await socketOwner(req.socket.remotePort ?? 0, req.socket.localPort ?? 0).catch(
        () => undefined,
      );
      if (reply.hang) return;
      delivered.status = reply.status ?? 200;
      res.writeHead(delivered.status).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    answerWith: (next) => {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The pids of the live actor processes (consumers with a heartbeat). */
export async function actorPids(f: JournalFixture): Promise<number[]> {
  const pids: number[] = [];
  for (const id of await f.redis.zrange(f.keys.workers(), 0, -1)) {
    const hash = await f.redis.hgetall(f.keys.worker(id));
    if (hash.mode === "consume" && hash.pid) pids.push(Number(hash.pid));
  }
  return pids;
}

/** Waits until `count` actor processes beat, and returns their pids. */
export async function waitForActors(f: JournalFixture, count = 1, timeoutMs = 15_000): Promise<number[]> {
  return await waitFor(
    async () => {
      const pids = await actorPids(f);
      return pids.length >= count ? pids : undefined;
    },
    timeoutMs,
    `${count} live actor(s)`,
  );
}

/** A task's run events in journal order: every entry after revision `afterRev` (1 = the accept's snapshot). */
export async function journalEvents(f: JournalFixture, taskId: string, afterRev = 1) {
  const rows = await f.redis.xrange(f.keys.journal(0, taskId), "-", "+");
  return rows
    .map(([, fields]) => ({
      rev: Number(fields[fields.indexOf("rev") + 1]),
      ev: fields[fields.indexOf("ev") + 1] ?? "",
    }))
    .filter((entry) => entry.rev > afterRev);
}

/** Established TCP connections of `pid`: [local, peer] address pairs. */
export async function connectionsOf(pid: number): Promise<[string, string][]> {
  // Other processes on the machine may hold many connections: leave room for all of them.
  const { stdout } = await run("ss", ["-tnpH", "state", "established"], { maxBuffer: 256 * 1024 * 1024 });
  return stdout
    .split("\n")
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => {
      const [, , local = "", peer = ""] = line.trim().split(/\s+/);
      return [local, peer];
    });
}

export { waitFor };
