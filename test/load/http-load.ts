// A lean HTTP/1.1 keep-alive load generator on raw loopback sockets: N connections = N concurrent clients, each with
// one request in flight. Bounded in requests and seconds, warm-up excluded; it only ever dials 127.0.0.1.
import type { Socket } from "bun";
import { type Summary, summarize } from "./stats.ts";

export interface HttpAnswer {
  status: number;
  body: string;
}

export interface LoadOptions {
  port: number;
  path: string;
  concurrency: number;
  /** Requests measured after the warm-up (the run stops at this count or maxSeconds, whichever comes first). */
  maxRequests: number;
  maxSeconds: number;
  /** Requests sent before the clock starts; their latencies are dropped. */
  warmupRequests: number;
  headers: Record<string, string>;
  /** The JSON body of request number `seq` (unique across warm-up and measurement). */
  body(seq: number): string;
  /** Whether an answer counts as a success (default: HTTP 200). */
  check?(answer: HttpAnswer): boolean;
}

export interface LoadResult extends Summary {
  errors: number;
  firstError: string | undefined;
  /** Every measured latency (ms), for merging rounds. */
  latencies: number[];
}

const CRLFCRLF = Buffer.from("\r\n\r\n");

/** One keep-alive connection with at most one request in flight; answers with Content-Length or chunked bodies. */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (answer: HttpAnswer) => void; reject: (error: Error) => void } | undefined;
  private socket: Socket<undefined> | undefined;

  static async open(port: number): Promise<Connection> {
    const connection = new Connection();
    connection.socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data: (_socket, chunk) => connection.onData(chunk),
        close: () => connection.fail(new Error("connection closed")),
        error: (_socket, error) => connection.fail(error),
      },
    });
    return connection;
  }

  send(head: string, body: string): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket?.write(head + body);
    });
  }

  close(): void {
    this.socket?.end();
  }

  private fail(error: Error): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(error);
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const end = this.buffer.indexOf(CRLFCRLF);
    if (end < 0) return;
    const head = this.buffer.subarray(0, end).toString("latin1");
    const status = Number(head.slice(9, 12));
    const lengthMatch = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let body: string | undefined;
    let consumed = 0;
    if (lengthMatch) {
      const length = Number(lengthMatch[1]);
      if (this.buffer.length < end + 4 + length) return;
      body = this.buffer.subarray(end + 4, end + 4 + length).toString("utf8");
      consumed = end + 4 + length;
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const decoded = decodeChunked(this.buffer, end + 4);
      if (!decoded) return;
      [body, consumed] = decoded;
    } else {
      this.fail(new Error(`answer without a length: ${head.slice(0, 200)}`));
      return;
    }
    this.buffer = this.buffer.subarray(consumed);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve({ status, body });
  }
}

/** [body, bytes consumed] of a complete chunked body starting at `from`, or undefined while incomplete. */
function decodeChunked(buffer: Buffer, from: number): [string, number] | undefined {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = buffer.indexOf("\r\n", at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(buffer.subarray(at, lineEnd).toString("latin1"), 16);
    if (buffer.length < lineEnd + 2 + size + 2) return undefined;
    if (size === 0) return [Buffer.concat(parts).toString("utf8"), lineEnd + 4];
    parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

function requestHead(options: LoadOptions, bodyBytes: number): string {
  const lines = [`POST ${options.path} HTTP/1.1`, `Host: 127.0.0.1:${options.port}`, "Connection: keep-alive"];
  for (const [name, value] of Object.entries(options.headers)) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${bodyBytes}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** One client of a load: one request in flight at a time. */
export interface LoadClient {
  send(body: string): Promise<HttpAnswer>;
  close(): void;
}

/** The bounds and checks of a load, whatever carries its requests. */
export type DriveOptions = Pick<LoadOptions, "maxRequests" | "maxSeconds" | "warmupRequests" | "body" | "check">;

/** Drives `clients`, first through the warm-up, then through the measured window; closes them at the end. */
export async function driveLoad(clients: readonly LoadClient[], options: DriveOptions): Promise<LoadResult> {
  const check = options.check ?? ((answer: HttpAnswer) => answer.status === 200);
  let seq = 0;
  let errors = 0;
  let firstError: string | undefined;
  const phase = async (count: number, seconds: number, latencies: number[] | undefined): Promise<number> => {
    let issued = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      clients.map(async (client) => {
        while (issued < count && performance.now() < deadline) {
          issued += 1;
          seq += 1;
          const body = options.body(seq);
          const t0 = performance.now();
          let ok = false;
          try {
            const answer = await client.send(body);
            ok = check(answer);
            if (!ok) firstError ??= `HTTP ${answer.status}: ${answer.body.slice(0, 300)}`;
          } catch (error) {
            firstError ??= error instanceof Error ? error.message : String(error);
          }
          const elapsed = performance.now() - t0;
          // warm-up answers are not counted, failed or not
          if (latencies) {
            if (ok) latencies.push(elapsed);
            else errors += 1;
          }
        }
      }),
    );
    return (performance.now() - started) / 1000;
  };
  try {
    if (options.warmupRequests > 0) await phase(options.warmupRequests, Math.max(5, options.maxSeconds / 2), undefined);
    firstError = undefined;
    const latencies: number[] = [];
    const seconds = await phase(options.maxRequests, options.maxSeconds, latencies);
    return { ...summarize(latencies, seconds), errors, firstError, latencies };
  } finally {
    for (const client of clients) client.close();
  }
}

/** Drives `options.concurrency` HTTP/1.1 connections, first through the warm-up, then through the measured window. */
export async function runHttpLoad(options: LoadOptions): Promise<LoadResult> {
  const connections = await Promise.all(
    Array.from({ length: options.concurrency }, () => Connection.open(options.port)),
  );
  const clients = connections.map(
    (connection): LoadClient => ({
      send: (body) => connection.send(requestHead(options, Buffer.byteLength(body)), body),
      close: () => connection.close(),
    }),
  );
  return await driveLoad(clients, options);
}
