// The SSE parser against the EventSource rules: line ends split across chunks, comments, multi-line data, event
// names, ids, a BOM, an incomplete last event, the size bound, and closing the body when the reader stops early.
import { describe, expect, test } from "bun:test";
import { parseSse, ResponseError, type SseEvent } from "../../../src/client/index.ts";

function body(chunks: readonly string[]): { stream: ReadableStream<Uint8Array>; canceled: () => boolean } {
  const encoder = new TextEncoder();
  let index = 0;
  let canceled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(encoder.encode(chunk));
    },
    cancel() {
      canceled = true;
    },
  });
  return { stream, canceled: () => canceled };
}

async function all(chunks: readonly string[], options = {}): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of parseSse(body(chunks).stream, options)) events.push(event);
  return events;
}

describe("parseSse", () => {
  test("one data line per event, as the gateway sends them", async () => {
    const events = await all(['data: {"a":1}\n\n', 'data: {"b":2}\n\n']);
    expect(events).toEqual([
      { event: "message", data: '{"a":1}', id: "" },
      { event: "message", data: '{"b":2}', id: "" },
    ]);
  });

  test("LF, CRLF and CR line ends, also when a CRLF is split between chunks", async () => {
    const events = await all(["data: one\r", "\n\r\ndata: two\r\rdata: three\n", "\n"]);
    expect(events.map((event) => event.data)).toEqual(["one", "two", "three"]);
  });

  test("an event split anywhere across chunks arrives whole", async () => {
    const text = 'event: error\ndata: {"jsonrpc":"2.0"}\n\n';
    const chunks = [...text];
    expect(await all(chunks)).toEqual([{ event: "error", data: '{"jsonrpc":"2.0"}', id: "" }]);
  });

  test("comments are skipped and reported; several data lines join with a line break", async () => {
    const comments: string[] = [];
    const events = await all([": stream open\n\n", "data: a\ndata:b\n: keep-alive\ndata:  c\n\n"], {
      onComment: (text: string) => comments.push(text),
    });
    expect(events.map((event) => event.data)).toEqual(["a\nb\n c"]);
    expect(comments).toEqual(["stream open", "keep-alive"]);
  });

  test("an event name applies to one event; the last id persists; a leading BOM is dropped", async () => {
    const events = await all(["\uFEFFid: 7\nevent: error\ndata: x\n\n", "data: y\n\n"]);
    expect(events).toEqual([
      { event: "error", data: "x", id: "7" },
      { event: "message", data: "y", id: "7" },
    ]);
  });

  test("an event without data is not dispatched; an incomplete last event is dropped", async () => {
    expect(await all(["event: ping\n\n", "data: whole\n\n", "data: cut off"])).toEqual([
      { event: "message", data: "whole", id: "" },
    ]);
  });

  test("multi-byte characters split between chunks decode correctly", async () => {
    const bytes = new TextEncoder().encode("data: héllo ✓\n\n");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const event of parseSse(stream)) events.push(event);
    expect(events.map((event) => event.data)).toEqual(["héllo ✓"]);
  });

  test("an event over the size bound fails the stream, also while its line is still arriving", async () => {
    await expect(all([`data: ${"x".repeat(100)}\n\n`], { maxEventChars: 50 })).rejects.toBeInstanceOf(ResponseError);
    await expect(all([`data: ${"x".repeat(100)}`, "more"], { maxEventChars: 50 })).rejects.toBeInstanceOf(
      ResponseError,
    );
    expect(await all([`data: ${"x".repeat(40)}\n\n`], { maxEventChars: 50 })).toHaveLength(1);
  });

  test("stopping early cancels the body (the connection closes)", async () => {
    const source = body(["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"]);
    for await (const event of parseSse(source.stream)) {
      expect(event.data).toBe("1");
      break;
    }
    expect(source.canceled()).toBe(true);
  });
});
