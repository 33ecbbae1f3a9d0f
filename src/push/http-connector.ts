// The default Connector: one HTTP(S) POST to an address the policy already checked, over node:http / node:https.
// It never resolves a name (the socket goes to the literal address; TLS still verifies the URL's host name),
// never follows a redirect, and bounds the time to the response head and the bytes it reads after it.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import type { LookupFunction } from "node:net";

export interface ConnectRequest {
  /** The webhook URL; its host goes into `Host` and TLS SNI / certificate checks, never into a DNS query. */
  url: URL;
  /** The checked address to open the socket to. */
  address: string;
  family: 4 | 6;
  headers: Readonly<Record<string, string>>;
  body: string;
  /** Deadline for the response head, from the moment the request starts. */
  timeoutMs: number;
}

export interface ConnectResponse {
  status: number;
  /** Lower-case header names; repeated headers joined with `, `. */
  headers: Readonly<Record<string, string>>;
}

/** Sends one request. Rejects on network errors, TLS errors and timeouts (WebhookTimeoutError). */
export type Connector = (request: ConnectRequest) => Promise<ConnectResponse>;

export class WebhookTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`No response within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

export interface HttpConnectorOptions {
  /** Extra trusted CA certificates (PEM) for https receivers, e.g. a private CA. Default: the system's. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Response body bytes read (and discarded) before the connection is cut. Default 65536. */
  maxResponseBytes?: number;
}

/** A lookup that can only answer the checked address: a backstop should a runtime ever look the name up anyway. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function flatten(message: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith("[") || /^[\d.]+$/.test(hostname);
}

export function createHttpConnector(options: HttpConnectorOptions = {}): Connector {
  const maxResponseBytes = options.maxResponseBytes ?? 65_536;
  return (target) =>
    new Promise<ConnectResponse>((resolve, reject) => {
      const secure = target.url.protocol === "https:";
      const hostname = target.url.hostname.replace(/\.$/, "");
      const requestOptions: RequestOptions = {
        host: target.address,
        family: target.family,
        port: target.url.port === "" ? (secure ? 443 : 80) : Number(target.url.port),
        method: "POST",
        path: `${target.url.pathname}${target.url.search}`,
        agent: false,
        lookup: pinnedLookup(target.address, target.family),
        headers: { ...target.headers, host: target.url.host, "content-length": String(Buffer.byteLength(target.body)) },
      };
      if (secure && !isIpLiteral(hostname)) requestOptions.servername = hostname;
      if (secure && options.ca !== undefined) requestOptions.ca = options.ca;
      const req = (secure ? httpsRequest : httpRequest)(requestOptions, (response) => {
        resolve({ status: response.statusCode ?? 0, headers: flatten(response) });
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > maxResponseBytes) response.destroy();
        });
        response.on("error", () => {});
        response.on("close", () => clearTimeout(timer));
      });
      const timer = setTimeout(() => req.destroy(new WebhookTimeoutError(target.timeoutMs)), target.timeoutMs);
      req.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      req.end(target.body);
    });
}
