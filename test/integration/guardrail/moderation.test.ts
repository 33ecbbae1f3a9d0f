// The moderation guardrail against a real local HTTP server on 127.0.0.1: flagged and unflagged answers, a 500, a
// malformed body, a server that hangs past the timeout and a closed port; every answer but "not flagged" fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { composeGuardrails, type Guardrail, moderationGuardrail } from "../../../src/guardrail/index.ts";
import { context, reasonOf, textOutput } from "../../unit/guardrail/fixtures.ts";

type Seen = { method: string; path: string; authorization: string | null; body: unknown };

const seen: Seen[] = [];
/** Resolved in afterAll so that hanging handlers end and the server can stop. */
let release: () => void = () => {};
const released = new Promise<void>((resolve) => {
  release = resolve;
});

let server: Server<undefined>;
let closedPortUrl: string;

beforeAll(async () => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const body: unknown = await request.json().catch(() => undefined);
      seen.push({
        method: request.method,
        path: url.pathname,
        authorization: request.headers.get("authorization"),
        body,
      });
      const behaviour = url.pathname.split("/")[1];
      switch (behaviour) {
        case "clean":
          return Response.json({
            id: "modr-1",
            model: "m",
            results: [{ flagged: false, categories: { hate: false } }],
          });
        case "flagged":
          return Response.json({
            results: [{ flagged: true, categories: { hate: false, violence: true, "self-harm": true } }],
          });
        case "error":
          return new Response("upstream broke", { status: 500 });
        case "malformed":
          return Response.json({ results: [{ flagged: "no" }] });
        case "not-json":
          return new Response("<html>ok</html>", { headers: { "content-type": "text/html" } });
        case "hang":
          await released;
          return Response.json({ results: [{ flagged: false }] });
        case "hang-body": {
          let canceled = false; // the client's abort cancels the stream; closing it then would throw
          return new Response(
            new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode('{"results":['));
                void released.then(() => (canceled ? undefined : controller.close()));
              },
              cancel() {
                canceled = true;
              },
            }),
            { headers: { "content-type": "application/json" } },
          );
        }
        default:
          return new Response("not found", { status: 404 });
      }
    },
  });
  const doomed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  closedPortUrl = `http://127.0.0.1:${doomed.port}`;
  await doomed.stop(true);
});

afterAll(async () => {
  release();
  await server.stop(true);
});

const base = (behaviour: string) => `http://127.0.0.1:${server.port}/${behaviour}`;
const moderation = (baseUrl: string, timeoutMs = 2000, apiKey?: string): Guardrail =>
  moderationGuardrail({ baseUrl, model: "omni-moderation-latest", timeoutMs }, apiKey === undefined ? {} : { apiKey });
const check = (guardrail: Guardrail, text = "some output") => guardrail.check(textOutput(text), context());

describe("moderationGuardrail against a local server", () => {
  test("not flagged passes, and the request is the OpenAI moderation request", async () => {
    seen.length = 0;
    expect(await check(moderation(base("clean"), 2000, "sk-local-1"), "hello there")).toEqual({ pass: true });
    expect(seen).toEqual([
      {
        method: "POST",
        path: "/clean/v1/moderations",
        authorization: "Bearer sk-local-1",
        body: { model: "omni-moderation-latest", input: "hello there" },
      },
    ]);
  });

  test("without a key no Authorization header is sent", async () => {
    seen.length = 0;
    expect(await check(moderation(base("clean")))).toEqual({ pass: true });
    expect(seen[0]?.authorization).toBeNull();
  });

  test("flagged fails with the flagged categories, and never with the key", async () => {
    const reason = reasonOf(await check(moderation(base("flagged"), 2000, "sk-local-2")));
    expect(reason).toBe("moderation flagged the output (self-harm, violence)");
    expect(reason).not.toContain("sk-local-2");
  });

  test("an HTTP 500 fails", async () => {
    expect(reasonOf(await check(moderation(base("error"))))).toBe("moderation endpoint answered HTTP 500");
  });

  test("a wrong path (404) fails", async () => {
    expect(reasonOf(await check(moderation(base("nowhere"))))).toBe("moderation endpoint answered HTTP 404");
  });

  test("a malformed body fails", async () => {
    expect(reasonOf(await check(moderation(base("malformed"))))).toBe("moderation endpoint answered a malformed body");
    expect(reasonOf(await check(moderation(base("not-json"))))).toStartWith("moderation request failed: ");
  });

  test("a server that hangs past the moderation timeout fails within about the timeout", async () => {
    const started = performance.now();
    expect(reasonOf(await check(moderation(base("hang"), 200)))).toBe("moderation timed out after 200 ms");
    expect(performance.now() - started).toBeLessThan(1500);
  });

  test("a body that never ends fails within about the timeout", async () => {
    const started = performance.now();
    expect(reasonOf(await check(moderation(base("hang-body"), 200)))).toBe("moderation timed out after 200 ms");
    expect(performance.now() - started).toBeLessThan(1500);
  });

  test("a server that is down (closed port) fails", async () => {
    expect(reasonOf(await check(moderation(closedPortUrl)))).toStartWith("moderation request failed: ");
  });

  test("composed, a hanging endpoint fails the whole check at the composed timeout", async () => {
    const all = composeGuardrails([moderation(base("hang"), 60_000)], { timeoutMs: 200 });
    const started = performance.now();
    expect(reasonOf(await check(all))).toBe("moderation: timed out after 200 ms");
    expect(performance.now() - started).toBeLessThan(1500);
  });

  test("composed, a down endpoint fails the whole check", async () => {
    const all = composeGuardrails([moderation(closedPortUrl)], { timeoutMs: 2000 });
    expect(reasonOf(await check(all))).toStartWith("moderation: moderation request failed: ");
  });
});
