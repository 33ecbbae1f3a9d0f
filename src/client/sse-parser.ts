// Parses a Server-Sent Events body (fetch's ReadableStream) into events, as the WHATWG EventSource algorithm does:
// CRLF, LF or CR line ends (also split across chunks), comments, multi-line data, `event`/`id` fields, a leading BOM.
import { ResponseError } from "./client-errors.ts";

/** One dispatched event. `event` is "message" unless the server named it; `id` is the last event id seen. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string;
}

export interface SseParseOptions {
  /** Largest event (its data plus the line being read), in UTF-16 code units; more fails the stream. Default 8 Mi. */
  maxEventChars?: number;
  /** Called with the text of each comment line (keep-alives such as `: keep-alive`). */
  onComment?: (text: string) => void;
}

export const DEFAULT_MAX_EVENT_CHARS = 8 * 1024 * 1024;

class EventBuilder {
  private data: string[] = [];
  private dataChars = 0;
  private type = "";
  private lastId = "";

  constructor(
    private readonly maxChars: number,
    private readonly onComment: ((text: string) => void) | undefined,
  ) {}

  get size(): number {
    return this.dataChars;
  }

  /** Processes one line without its line end; returns an event when the line is blank and data was collected. */
  line(line: string): SseEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) {
      this.onComment?.(line.slice(1).replace(/^ /, ""));
      return undefined;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") {
      this.data.push(value);
      this.dataChars += value.length + 1;
      if (this.dataChars > this.maxChars)
        throw new ResponseError(`an SSE event exceeds ${this.maxChars} characters`, 200);
    } else if (field === "event") this.type = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const type = this.type;
    this.type = "";
    if (this.data.length === 0) return undefined;
    const data = this.data.join("\n");
    this.data = [];
    this.dataChars = 0;
    return { event: type === "" ? "message" : type, data, id: this.lastId };
  }
}

/**
 * Yields each event of an SSE body as it completes. An event left incomplete when the body ends is dropped (as the
 * EventSource algorithm does). Stopping the iteration cancels the body, which closes the connection.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  options: SseParseOptions = {},
): AsyncGenerator<SseEvent, void, undefined> {
  const maxChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  const builder = new EventBuilder(maxChars, options.onComment);
  const decoder = new TextDecoder("utf-8");
  const reader = body.getReader();
  let buffer = "";
  let first = true;
  let done = false;
  try {
    while (!done) {
      const chunk = await reader.read();
      done = chunk.done;
      buffer += done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      if (first && buffer !== "") {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      let start = 0;
      for (;;) {
        const end = nextLineEnd(buffer, start);
        if (end === -1) break;
        // A CR at the very end may be the first half of a CRLF still in flight.
        if (buffer[end] === "\r" && end === buffer.length - 1 && !done) break;
        const event = builder.line(buffer.slice(start, end));
        start = end + (buffer[end] === "\r" && buffer[end + 1] === "\n" ? 2 : 1);
        if (event) yield event;
      }
      buffer = buffer.slice(start);
      if (buffer.length + builder.size > maxChars)
        throw new ResponseError(`an SSE event exceeds ${maxChars} characters`, 200);
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function nextLineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}
