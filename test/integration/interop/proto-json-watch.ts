// A fetch for SDK clients that passes every A2A 1.0 answer it carries through the strict ProtoJSON parser: each
// JSON-RPC result or HTTP+JSON answer by its method, each SSE event as a StreamResponse, each agent card as an
// AgentCard. The client gets the response unchanged; the problems are collected for the test to assert on.
import { matchRoute } from "../../../src/gateway/index.ts";
import { type A2aMethod, isA2aMethod } from "../../../src/protocol/index.ts";
import { cardProblem, resultProblem } from "../../support/proto-json.ts";
import { SseParser } from "../../support/sse-parser.ts";

type Fetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** The A2A method of an HTTP+JSON request (`/a2a/<profile>/<route>`), or undefined for any other URL. */
function restMethodOf(url: string, init: RequestInit | undefined): A2aMethod | undefined {
  const path = new URL(url).pathname;
  const segments = path.split("/").slice(3);
  if (!path.startsWith("/a2a/") || segments.length === 0 || segments[0] === ".well-known") return undefined;
  try {
    return matchRoute((init?.method ?? "GET").toUpperCase(), segments, path).method;
  } catch {
    return undefined;
  }
}

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
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const rest = restMethodOf(url, init);
    const method = rest ?? methodOf(init);
    const response = await this.inner(input, init);
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream") && response.body && method) {
      const [mine, theirs] = response.body.tee();
      this.reading.push(this.readEvents(method, mine, rest !== undefined));
      return new Response(theirs, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    if (type.startsWith("application/json") || type.startsWith("application/a2a+json")) {
      const text = await response.clone().text();
      const body: unknown = text === "" ? undefined : JSON.parse(text);
      if (url.endsWith("agent-card.json")) this.check("cards", cardProblem(body));
      // An HTTP+JSON answer is the response message itself (an error is a google.rpc.Status, not an A2A message).
      else if (rest === "DeleteTaskPushNotificationConfig" && response.ok) {
        // google.protobuf.Empty in ProtoJSON is {}.
        const empty = JSON.stringify(body ?? {}) === "{}";
        this.check("results", empty ? undefined : `DeleteTaskPushNotificationConfig: expected {}, got ${text}`);
      } else if (rest && response.ok) this.check("results", resultProblem(rest, body ?? {}));
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

  private async readEvents(method: A2aMethod, body: ReadableStream<Uint8Array>, bare: boolean): Promise<void> {
    const parser = new SseParser(
      (event) => {
        if (event.event === "error") return;
        const frame = JSON.parse(event.data) as { result?: unknown };
        if (bare) this.check("events", resultProblem(method, frame));
        else if ("result" in frame) this.check("events", resultProblem(method, frame.result));
      },
      () => {},
    );
    const decoder = new TextDecoder();
    for await (const chunk of body) parser.push(decoder.decode(chunk, { stream: true }));
  }
}
