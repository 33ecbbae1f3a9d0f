// Many SSE subscriptions from one process on raw loopback sockets: one POST per connection, the chunked
// text/event-stream body decoded incrementally, each `data:` event handed to a callback. Dials 127.0.0.1 only.
import type { Socket } from "bun";

export interface SseSubscription {
  /** Resolves with the HTTP status once the response head arrived. */
  readonly opened: Promise<number>;
  close(): void;
}

/** Decodes a chunked body as it arrives, then splits it into SSE events (blank-line separated). */
class EventParser {
  private raw: Buffer = Buffer.alloc(0);
  private text = "";
  private headDone = false;
  private remainingInChunk = 0;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly onHead: (status: number) => void,
    private readonly onEvent: (data: string) => void,
  ) {}

  push(chunk: Buffer): void {
    this.raw = this.raw.length === 0 ? chunk : Buffer.concat([this.raw, chunk]);
    if (!this.headDone) {
      const end = this.raw.indexOf("\r\n\r\n");
      if (end < 0) return;
      this.onHead(Number(this.raw.subarray(9, 12).toString("latin1")));
      this.headDone = true;
      this.raw = this.raw.subarray(end + 4);
    }
    this.dechunk();
    this.split();
  }

  private dechunk(): void {
    for (;;) {
      if (this.remainingInChunk > 0) {
        const take = Math.min(this.remainingInChunk, this.raw.length);
        if (take === 0) return;
        this.text += this.decoder.decode(this.raw.subarray(0, take), { stream: true });
        this.raw = this.raw.subarray(take);
        this.remainingInChunk -= take;
        if (this.remainingInChunk > 0) return;
        continue;
      }
      // the CRLF that ends the previous chunk, then the next chunk's size line
      let at = 0;
      if (this.raw[0] === 0x0d && this.raw[1] === 0x0a) at = 2;
      const lineEnd = this.raw.indexOf("\r\n", at);
      if (lineEnd < 0) return;
      const size = Number.parseInt(this.raw.subarray(at, lineEnd).toString("latin1"), 16);
      if (!Number.isFinite(size) || size === 0) return;
      this.raw = this.raw.subarray(lineEnd + 2);
      this.remainingInChunk = size;
    }
  }

  private split(): void {
    for (;;) {
      const end = this.text.indexOf("\n\n");
      if (end < 0) return;
      const block = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      for (const line of block.split("\n")) if (line.startsWith("data: ")) this.onEvent(line.slice(6));
    }
  }
}

/** Opens one SubscribeToTask stream; `onEvent` gets each event's data (a JSON-RPC response as text). */
export async function subscribe(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: string,
  onEvent: (data: string) => void,
  onClose: () => void,
): Promise<SseSubscription> {
  let openedResolve: (status: number) => void = () => {};
  const opened = new Promise<number>((resolve) => {
    openedResolve = resolve;
  });
  const parser = new EventParser(openedResolve, onEvent);
  const socket: Socket<undefined> = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_socket, chunk) => parser.push(chunk),
      close: () => {
        openedResolve(0);
        onClose();
      },
      error: () => openedResolve(0),
    },
  });
  const lines = [`POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Accept: text/event-stream"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`);
  return { opened, close: () => socket.end() };
}
