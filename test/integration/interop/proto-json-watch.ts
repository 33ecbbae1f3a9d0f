// A fetch for SDK clients that passes every A2A 1.0 answer it carries through the strict ProtoJSON parser: each
// JSON-RPC result by its method, each SSE event as a StreamResponse, each agent card as an AgentCard. The client
// gets the response unchanged; the problems are collected for the test to assert on.
import { type A2aMethod, isA2aMethod } from "../../../src/protocol/index.ts";
import { cardProblem, resultProblem } from "../../support/proto-json.ts";
import { SseParser } from "../../support/sse-parser.ts";

type Fetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

function methodOf(init: RequestInit | undefined): A2aMethod | undefined {
  if (typeof init?.body !== "string") return undefined;
  try {
    const method: unknown = (JSON.parse(init.body) as { method?: unknown }).method;
    return isA2aMethod(method) ? method : undefined;
  } catch {
    return undefined;
  }
}

export class ProtoJsonWatch {
  readonly problems: string[] = [];
  /** How many results, events and cards were checked (a watch that saw nothing proves nothing). */
  readonly checked = { results: 0, events: 0, cards: 0 };
  private readonly reading: Promise<void>[] = [];

  constructor(private readonly inner: Fetch = (input, init) => fetch(input, init)) {}

  readonly fetch: Fetch = async (input, init) => {
    const method = methodOf(init);
    const response = await this.inner(input, init);
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream") && response.body && method) {
      const [mine, theirs] = response.body.tee();
      this.reading.push(this.readEvents(method, mine));
      return new Response(theirs, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    if (type.startsWith("application/json")) {
      const body: unknown = JSON.parse(await response.clone().text());
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (url.endsWith("agent-card.json")) this.check("cards", cardProblem(body));
      else if (method && typeof body === "object" && body !== null && "result" in body)
        this.check("results", resultProblem(method, body.result));
    }
    return response;
  };

  /** Waits until every stream seen so far has been read to its end. */
  async settled(): Promise<void> {
    await Promise.all(this.reading.splice(0));
  }

  private check(kind: keyof ProtoJsonWatch["checked"], problem: string | undefined): void {
    this.checked[kind] += 1;
    if (problem !== undefined) this.problems.push(problem);
  }

  private async readEvents(method: A2aMethod, body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = new SseParser(
      (event) => {
        const frame = JSON.parse(event.data) as { result?: unknown };
        if ("result" in frame) this.check("events", resultProblem(method, frame.result));
      },
      () => {},
    );
    const decoder = new TextDecoder();
    for await (const chunk of body) parser.push(decoder.decode(chunk, { stream: true }));
  }
}
