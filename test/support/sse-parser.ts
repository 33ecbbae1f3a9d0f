// Test-side SSE parsing: an incremental parser of `text/event-stream` (events, comments, id lines), and an incremental
// decoder of HTTP/1.1 chunked bodies for tests that speak HTTP over a raw socket.

/** One SSE event as received: its `event:` name (if any), its data lines joined, and when its last byte arrived. */
export interface SseEvent {
  readonly event: string | undefined;
  readonly data: string;
  /** `id:` lines in the event (the gateway sends none). */
  readonly ids: string[];
  /** performance.now() when the event was complete. */
  readonly at: number;
}

export interface SseComment {
  readonly text: string;
  readonly at: number;
}

/** Feeds text in any slicing; calls back once per complete event or comment line, in order. */
export class SseParser {
  private buffer = "";
  private lines: string[] = [];

  constructor(
    private readonly onEvent: (event: SseEvent) => void,
    private readonly onComment: (comment: SseComment) => void,
  ) {}

  push(text: string): void {
    this.buffer += text;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) return;
      // A lone CR at the end may be the first half of CRLF: wait for more.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) return;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    const now = performance.now();
    if (line === "") {
      if (this.lines.length > 0) this.dispatch(now);
      return;
    }
    if (line.startsWith(":")) {
      this.onComment({ text: line.slice(1).trimStart(), at: now });
      return;
    }
    this.lines.push(line);
  }

  private dispatch(at: number): void {
    let event: string | undefined;
    const data: string[] = [];
    const ids: string[] = [];
    for (const line of this.lines) {
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id") ids.push(value);
    }
    this.lines = [];
    this.onEvent({ event, data: data.join("\n"), ids, at });
  }
}

/** Decodes an HTTP/1.1 response read from a socket: status, headers, and the (chunked or plain) body as it arrives. */
export class HttpResponseDecoder {
  status = 0;
  headers = new Map<string, string>();
  /** The body ended (the last chunk arrived). */
  complete = false;
  private head = Buffer.alloc(0);
  private body = Buffer.alloc(0);
  private inBody = false;
  private chunked = false;

  constructor(private readonly onBody: (bytes: Buffer) => void) {}

  push(bytes: Buffer): void {
    if (!this.inBody) {
      this.head = Buffer.concat([this.head, bytes]);
      const end = this.head.indexOf("\r\n\r\n");
      if (end < 0) return;
      const [statusLine = "", ...headerLines] = this.head.subarray(0, end).toString("latin1").split("\r\n");
      this.status = Number(statusLine.split(" ")[1]);
      for (const line of headerLines) {
        const colon = line.indexOf(":");
        this.headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      this.chunked = /chunked/i.test(this.headers.get("transfer-encoding") ?? "");
      this.inBody = true;
      bytes = this.head.subarray(end + 4);
      this.head = Buffer.alloc(0);
    }
    if (!this.chunked) {
      if (bytes.length > 0) this.onBody(bytes);
      return;
    }
    this.body = Buffer.concat([this.body, bytes]);
    for (;;) {
      const lineEnd = this.body.indexOf("\r\n");
      if (lineEnd < 0) return;
      const size = Number.parseInt(this.body.subarray(0, lineEnd).toString("latin1"), 16);
      if (size === 0) {
        this.complete = true;
        return;
      }
      if (this.body.length < lineEnd + 2 + size + 2) return;
      this.onBody(this.body.subarray(lineEnd + 2, lineEnd + 2 + size));
      this.body = this.body.subarray(lineEnd + 2 + size + 2);
    }
  }
}
