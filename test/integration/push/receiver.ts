// Test webhook receivers on loopback (plain HTTP and HTTPS with a throwaway certificate), and connectors that
// make sure no test ever opens a connection to anything but 127.0.0.1 or ::1.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { type Connector, type ConnectRequest, createHttpConnector } from "../../../src/push/index.ts";

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  remoteAddress: string;
  /** TLS server name the client asked for (https receivers only). */
  servername?: string;
}

/** How to answer a request; `hang: true` never answers (for timeouts); `delayMs` answers that much later. */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  hang?: boolean;
  delayMs?: number;
}

export interface Receiver {
  port: number;
  requests: Received[];
  close(): Promise<void>;
}

export interface TlsMaterial {
  key: string;
  cert: string;
}

type Answerer = (request: Received, index: number) => Answer;

function handler(requests: Received[], answer: Answerer) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const servername = (req.socket as Partial<TLSSocket>).servername;
      const received: Received = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        remoteAddress: req.socket.remoteAddress ?? "",
        ...(typeof servername === "string" ? { servername } : {}),
      };
      requests.push(received);
      const reply = answer(received, requests.length - 1);
      if (reply.hang) return;
      const send = () => {
        res.writeHead(reply.status ?? 200, reply.headers ?? {});
        res.end("ok");
      };
      if (reply.delayMs === undefined) send();
      else setTimeout(send, reply.delayMs);
    });
  };
}

/** An HTTP (or, with `tls`, HTTPS) receiver on loopback (127.0.0.1 unless `host` is ::1) and a free port. */
export async function startReceiver(
  answer: Answerer = () => ({}),
  tls?: TlsMaterial,
  host: "127.0.0.1" | "::1" = "127.0.0.1",
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = tls ? createTlsServer(tls, handler(requests, answer)) : createServer(handler(requests, answer));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A self-signed certificate for `hook.test` made with the openssl CLI, or undefined when openssl is missing. */
export function selfSignedCertificate(): TlsMaterial | undefined {
  const dir = mkdtempSync(join(tmpdir(), "a2a-push-tls-"));
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  try {
    const args = "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=hook.test";
    execFileSync(
      "openssl",
      [...args.split(" "), "-addext", "subjectAltName=DNS:hook.test", "-keyout", key, "-out", cert],
      { stdio: "ignore" },
    );
    return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether this machine has IPv6 loopback (containers often do not). */
export async function ipv6LoopbackAvailable(): Promise<boolean> {
  try {
    await (await startReceiver(undefined, undefined, "::1")).close();
    return true;
  } catch {
    return false;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "::1"]);

/**
 * The real connector, behind a guard: any address other than 127.0.0.1 / ::1 is recorded in `violations` and
 * never connected to. Tests assert `violations` is empty, so a policy bug fails the test instead of sending.
 */
export function loopbackOnly(
  inner: Connector = createHttpConnector(),
): Connector & { violations: string[]; calls: ConnectRequest[] } {
  const violations: string[] = [];
  const calls: ConnectRequest[] = [];
  const connector = async (request: ConnectRequest) => {
    calls.push(request);
    if (!LOOPBACK.has(request.address)) {
      violations.push(request.address);
      throw new Error(`test tried to connect to non-loopback address ${request.address}`);
    }
    return inner(request);
  };
  return Object.assign(connector, { violations, calls });
}

/** A connector for cases that must never connect at all: every call is recorded, and fails. */
export function neverConnect(): Connector & { calls: ConnectRequest[] } {
  const calls: ConnectRequest[] = [];
  const connector = async (request: ConnectRequest) => {
    calls.push(request);
    throw new Error(`connector must not be called (address ${request.address})`);
  };
  return Object.assign(connector, { calls });
}
