// A small SSE client for tests: makes a JSON-RPC or HTTP+JSON streaming call over real HTTP (fetch, or a raw socket when a
// test needs thousands of connections or a client that stops reading) and records every event and comment as it
// arrives.
import { connect, type Socket } from "node:net";
import { HttpResponseDecoder, type SseComment, type SseEvent, SseParser } from "./sse-parser.ts";

export interface StreamOptions {
  key: string;
  profile?: string;
  id?: string | number;
  headers?: Record<string, string>;
  /** The A2A-Version header (default 1.0); null sends none (an A2A 0.3 request). */
  version?: string | null;
}

/** Everything one streaming call received; `json` is set instead of events when the answer was not a stream. */
export class StreamRecording {
  status = 0;
  contentType = "";
  headers: Record<string, string> = {};
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON-RPC answers
  json: any;
  readonly events: SseEvent[] = [];
  readonly comments: SseComment[] = [];
  /** performance.now() of every body chunk's arrival. */
  readonly chunkTimes: number[] = [];
  bodyBytes = 0;
  /** The server ended the body (or the connection closed). */
  ended = false;
  readonly closed: Promise<void>;
  /** Marks the end of the body (called by the transport). */
  markEnded!: () => void;
  private readonly waiters = new Set<() => void>();
  private readonly decoder = new TextDecoder();
  private readonly parser = new SseParser(
    (event) => {
      this.events.push(event);
      this.wake();
    },
    (comment) => {
      this.comments.push(comment);
      this.wake();
    },
  );

  constructor() {
    this.closed = new Promise((resolve) => {
      this.markEnded = () => {
        this.ended = true;
        this.wake();
        resolve();
      };
    });
  }

  /** The parsed JSON-RPC response of every data event. */
  // biome-ignore lint/suspicious/noExplicitAny: see json
  get messages(): any[] {
    return this.events.map((event) => JSON.parse(event.data));
  }

  // biome-ignore lint/suspicious/noExplicitAny: see json
  get results(): any[] {
    return this.messages.map((message) => message.result);
  }

  body(bytes: Uint8Array): void {
    this.chunkTimes.push(performance.now());
    this.bodyBytes += bytes.byteLength;
    this.parser.push(this.decoder.decode(bytes, { stream: true }));
  }

  /** Resolves once `probe` holds (checked after every event, comment and the end), or fails after `timeoutMs`. */
  async until(probe: (recording: this) => boolean, timeoutMs = 5000): Promise<void> {
    if (probe(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`stream condition not met in ${timeoutMs} ms (${this.events.length} events)`));
      }, timeoutMs);
      const check = () => {
        if (!probe(this)) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  /** Waits until `count` events arrived. */
  waitForEvents(count: number, timeoutMs = 5000): Promise<void> {
    return this.until((r) => r.events.length >= count, timeoutMs);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

function envelope(method: string, params: unknown, id: string | number): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

function requestHeaders(options: StreamOptions): Record<string, string> {
  const version = options.version === undefined ? "1.0" : options.version;
  return {
    "Content-Type": "application/json",
    Accept: "text/event-stream",
    Authorization: `Bearer ${options.key}`,
    ...(version === null ? {} : { "A2A-Version": version }),
    ...options.headers,
  };
}

/** A streaming call over fetch; resolves once the headers arrived. `abort()` drops the connection. */
export function openStream(
  base: string,
  method: string,
  params: unknown,
  options: StreamOptions,
): Promise<StreamRecording & { abort(): void }> {
  return record(`${base}/a2a/${options.profile ?? "echo"}`, {
    method: "POST",
    headers: requestHeaders(options),
    body: envelope(method, params, options.id ?? 1),
  });
}

/**
 * An HTTP+JSON streaming call (`path` below the profile's endpoint, e.g. `/message:stream`) over fetch; `body` is sent
 * as JSON when given. Its events' data are bare StreamResponses.
 */
export function openRestStream(
  base: string,
  httpMethod: "GET" | "POST",
  path: string,
  body: unknown,
  options: StreamOptions,
): Promise<StreamRecording & { abort(): void }> {
  return record(`${base}/a2a/${options.profile ?? "echo"}${path}`, {
    method: httpMethod,
    headers: requestHeaders(options),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function record(url: string, init: RequestInit): Promise<StreamRecording & { abort(): void }> {
  const controller = new AbortController();
  const recording = Object.assign(new StreamRecording(), { abort: () => controller.abort() });
  const response = await fetch(url, { ...init, signal: controller.signal });
  recording.status = response.status;
  recording.contentType = response.headers.get("content-type") ?? "";
  response.headers.forEach((value, name) => {
    recording.headers[name] = value;
  });
  if (!recording.contentType.startsWith("text/event-stream")) {
    recording.json = await response.json();
    recording.ended = true;
    return recording;
  }
  const reader = response.body!.getReader();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        recording.body(value);
      }
    } catch {
      // aborted by the test, or the server cut the connection
    }
    recording.markEnded();
  })();
  return recording;
}

/** The same call over a socket of its own; `paused` leaves every byte unread until `socket.resume()`. */
export function openRawStream(
  port: number,
  method: string,
  params: unknown,
  options: StreamOptions & { paused?: boolean },
): StreamRecording & { socket: Socket } {
  const socket = connect(port, "127.0.0.1");
  const recording = Object.assign(new StreamRecording(), { socket });
  const decoder = new HttpResponseDecoder((bytes) => recording.body(bytes));
  const body = envelope(method, params, options.id ?? 1);
  const headers = {
    ...requestHeaders(options),
    Host: `127.0.0.1:${port}`,
    "Content-Length": `${Buffer.byteLength(body)}`,
  };
  if (options.paused) socket.pause();
  socket.on("connect", () => {
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`POST /a2a/${options.profile ?? "echo"} HTTP/1.1\r\n${head.join("")}\r\n${body}`);
  });
  socket.on("data", (chunk: Buffer) => {
    decoder.push(chunk);
    recording.status = decoder.status;
    recording.contentType = decoder.headers.get("content-type") ?? "";
    if (decoder.complete) socket.end();
  });
  socket.on("error", () => {});
  socket.on("close", () => recording.markEnded());
  return recording;
}
