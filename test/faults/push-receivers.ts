// The webhook receivers of the push scenario: one loopback HTTP server whose paths fail in different ways. It records
// every request with its signature check, and watches (in /proc, while each request is open) that no connection comes
// from the gateway process and which actor sent a sample of them. It never connects anywhere itself.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "../../src/push/index.ts";

/**
 * The receivers, one path each: 200; 503 for the first request of each webhook-id, then 200; 500 always; 410; 200
 * after the push timeout; the socket destroyed without an answer; a 302 to /target (which must never be asked).
 */
export const ENDPOINTS = ["ok", "flaky", "down", "gone", "slow", "reset", "redirect"] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export interface Request {
  endpoint: Endpoint | "target";
  webhookId: string;
  body: string;
  token: string | undefined;
  authorization: string | undefined;
  /** Whether each of the installation's secrets signed it (Standard Webhooks; every secret signs, for rotation). */
  verified: boolean;
  /**
   * Who opened the connection, for the requests of a sampled batch: the gateway, a supervised process (an actor), or
   * unknown (the socket was gone before the lookup); "unchecked" for the other batches.
   */
  owner: "gateway" | "worker" | "unknown" | "unchecked";
  ownerPid: number | undefined;
  /** The status answered; undefined for a reset or an answer not sent yet. */
  status?: number;
}

export interface Receivers {
  base: string;
  requests: Request[];
  /** Connections the gateway process opened to the receivers (every one is seen: each request waits for a look). */
  fromGateway(): number;
  /** How many looks had to read the TCP tables because the gateway held a socket not seen before. */
  gatewayReads(): number;
  /**
   * The actor sending a request to `endpoint` right now: one that arrived less than `withinMs` ago, is not answered
   * yet, and whose connection the actor still holds (so the attempt is in flight). Undefined when there is none.
   */
  sender(endpoint: Endpoint, withinMs: number): number | undefined;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  secrets: readonly string[];
  /** How long /slow holds a request before it answers (ms): longer than push.timeoutSeconds. */
  slowMs: number;
  /** The processes that may have opened a connection: the gateway's pid, and the supervisor whose children count. */
  gatewayPid: () => number;
  supervisorPid: () => number;
}

/** The children of `pid` (every thread's list: a runtime may spawn from any of its threads). */
function childrenOf(pid: number): number[] {
  const found = new Set<number>();
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
        for (const child of text === "" ? [] : text.split(/\s+/)) found.add(Number(child));
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // the process ended
  }
  return [...found];
}

/** socket inode -> pid, over the sockets `pids` hold. */
function socketsOf(pids: readonly number[]): Map<string, number> {
  const owners = new Map<string, number>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (link.startsWith("socket:[")) owners.set(link.slice(8, -1), pid);
      } catch {
        // closed meanwhile
      }
    }
  }
  return owners;
}

/** How long a request waits for the connection watch at most: one look serves every request that arrived meanwhile. */
const BATCH_MS = 100;

/** One row of the kernel's TCP tables (/proc/net/tcp and tcp6): local and remote port, state, socket inode. */
interface TcpRow {
  localPort: number;
  remotePort: number;
  established: boolean;
  listening: boolean;
  inode: string;
}

function tcpRows(): TcpRow[] {
  const rows: TcpRow[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, remote, state, inode] = [fields[1], fields[2], fields[3], fields[9]];
      if (local === undefined || remote === undefined || inode === undefined) continue;
      const port = (address: string) => Number.parseInt(address.slice(address.lastIndexOf(":") + 1), 16);
      rows.push({
        localPort: port(local),
        remotePort: port(remote),
        established: state === "01",
        listening: state === "0A",
        inode,
      });
    }
  }
  return rows;
}

/** How often a batch also finds the process behind each of its requests (reading every TCP socket costs tens of ms). */
const ATTRIBUTE_EVERY_MS = 1000;

/** Looks after which a gateway socket that leads nowhere yet (not in the TCP tables, or not connected) is let be. */
const UNRESOLVED_LOOKS = 5;

/**
 * Watches who connects to the receivers. Each request waits for the next batch (at most BATCH_MS), so its connection
 * is still open when the batch looks:
 * - the gateway, at every batch: its socket descriptors are listed (a few dozen), and only when one is new (or not
 *   connected yet when last seen) are the kernel's TCP tables read to see where it leads; one that leads to the
 *   receivers is counted in `fromGateway`;
 * - the senders, one batch a second: each request's client socket is found in the TCP tables and matched to the
 *   process that holds it (the gateway, the supervisor or one of its children, the actors).
 */
class ConnectionWatch {
  /** Connections from the gateway to the receivers (must stay 0). */
  fromGateway = 0;
  /** Batches that had to read the TCP tables for new gateway sockets. */
  gatewayReads = 0;
  /** Gateway sockets seen: true once settled (listening or connected), else the looks it has been seen unresolved. */
  private readonly gatewaySockets = new Map<string, true | number>();
  private pending: { request: Request; clientPort: number; resolve: () => void }[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastAttribution = 0;

  constructor(
    private readonly serverPort: () => number,
    private readonly options: ReceiverOptions,
  ) {}

  /** Resolves once the batch that includes this request has looked (its `owner` is set when it was sampled). */
  check(request: Request, clientPort: number): Promise<void> {
    return new Promise((resolve) => {
      this.pending.push({ request, clientPort, resolve });
      this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
    });
  }

  private flush(): void {
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    const gateway = this.options.gatewayPid();
    const fresh = [...socketsOf([gateway]).keys()].filter((inode) => this.gatewaySockets.get(inode) !== true);
    const attribute = Date.now() - this.lastAttribution >= ATTRIBUTE_EVERY_MS;
    if (fresh.length > 0 || attribute) {
      const rows = tcpRows();
      if (fresh.length > 0) {
        this.gatewayReads += 1;
        const byInode = new Map(rows.map((row) => [row.inode, row]));
        for (const inode of fresh) {
          const row = byInode.get(inode);
          if (row?.remotePort === this.serverPort()) this.fromGateway += 1;
          const looks = Number(this.gatewaySockets.get(inode) ?? 0) + 1;
          const settled = row?.listening || (row !== undefined && row.remotePort !== 0) || looks >= UNRESOLVED_LOOKS;
          this.gatewaySockets.set(inode, settled ? true : looks);
        }
      }
      if (attribute) {
        this.lastAttribution = Date.now();
        const supervisor = this.options.supervisorPid();
        const owners = socketsOf([gateway, supervisor, ...childrenOf(supervisor)]);
        const clients = new Map<number, string>();
        for (const row of rows) {
          if (row.established && row.remotePort === this.serverPort()) clients.set(row.localPort, row.inode);
        }
        for (const { request, clientPort } of batch) {
          const inode = clients.get(clientPort);
          const pid = inode === undefined ? undefined : owners.get(inode);
          request.ownerPid = pid;
          request.owner = pid === undefined ? "unknown" : pid === gateway ? "gateway" : "worker";
        }
      }
    }
    for (const { resolve } of batch) resolve();
  }

  /** The supervised process (an actor) that holds an established connection from one of `clientPorts` right now. */
  sender(clientPorts: readonly number[]): number | undefined {
    const supervisor = this.options.supervisorPid();
    const owners = socketsOf(childrenOf(supervisor));
    for (const row of tcpRows()) {
      if (!row.established || row.remotePort !== this.serverPort() || !clientPorts.includes(row.localPort)) continue;
      const pid = owners.get(row.inode);
      if (pid !== undefined) return pid;
    }
    return undefined;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

/** Starts the receivers on 127.0.0.1 and a free port; each endpoint is the path `/<name>`. */
export async function startReceivers(options: ReceiverOptions): Promise<Receivers> {
  const requests: Request[] = [];
  /** Requests not answered yet: their client port and when they arrived. */
  const opened = new Map<Request, { clientPort: number; at: number }>();
  const seen = new Map<string, number>();
  let port = 0;
  const watch = new ConnectionWatch(() => port, options);

  const answer = (request: Request, res: ServerResponse, status: number, headers: Record<string, string> = {}) => {
    request.status = status;
    opened.delete(request);
    res.writeHead(status, headers).end("answer");
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = (req.url ?? "").split("?")[0]?.slice(1) ?? "";
      const endpoint = (ENDPOINTS as readonly string[]).includes(path) ? (path as Endpoint) : "target";
      const webhookId = header(req, "webhook-id") ?? "";
      const request: Request = {
        endpoint,
        webhookId,
        body,
        token: header(req, "x-a2a-notification-token"),
        authorization: header(req, "authorization"),
        verified: options.secrets.every((secret) => verifyWebhook(req.headers, body, [secret], 300).ok),
        owner: "unchecked",
        ownerPid: undefined,
      };
      requests.push(request);
      // The client's socket is open until it is answered: let the watch look first.
      const clientPort = req.socket.remotePort ?? 0;
      await watch.check(request, clientPort);
      opened.set(request, { clientPort, at: Date.now() });
      const nth = (seen.get(`${endpoint} ${webhookId}`) ?? 0) + 1;
      seen.set(`${endpoint} ${webhookId}`, nth);
      switch (endpoint) {
        case "ok":
        case "target":
          return answer(request, res, 200);
        case "flaky":
          return answer(request, res, nth === 1 ? 503 : 200);
        case "down":
          return answer(request, res, 500);
        case "gone":
          return answer(request, res, 410);
        case "slow":
          setTimeout(() => answer(request, res, 200), options.slowMs);
          return;
        case "reset":
          opened.delete(request);
          req.socket.destroy();
          return;
        case "redirect":
          return answer(request, res, 302, { location: `http://127.0.0.1:${port}/target` });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    fromGateway: () => watch.fromGateway,
    gatewayReads: () => watch.gatewayReads,
    sender: (endpoint, withinMs) => {
      const now = Date.now();
      const ports = [...opened]
        .filter(([request, { at }]) => request.endpoint === endpoint && now - at < withinMs)
        .map(([, { clientPort }]) => clientPort);
      return ports.length === 0 ? undefined : watch.sender(ports);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
