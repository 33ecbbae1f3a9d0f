// Routing never depends on the Host header: a short Host cannot make the router take part of the path for the host
// (before the fix, Host "a" served /zz/a2a/echo as /a2a/echo and /zz/metrics as /metrics, around a proxy's path rules).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { type Harness, startHarness } from "./harness.ts";

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  key = (await h.client()).key;
});

afterAll(async () => {
  await h.stop();
});

/** Sends one raw HTTP/1.1 request (so that the Host header is exactly what the test says) and reads the answer. */
function raw(method: string, path: string, host: string, headers: Record<string, string> = {}, body = "") {
  const port = new URL(h.gateway.url).port;
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `Host: ${host}`,
    "Connection: close",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    body,
  ];
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("end", () => {
      const [head = "", ...rest] = text.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), body: rest.join("\r\n\r\n") });
    });
    socket.write(lines.join("\r\n"));
  });
}

const getTask = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t-missing" } });
const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };

test("a short Host header cannot route /zz/a2a/echo to /a2a/echo or /zz/metrics to /metrics", async () => {
  for (const host of ["a", "ab", "abc", "a:1"]) {
    expect((await raw("GET", "/zz/metrics", host)).status).toBe(404);
    expect((await raw("GET", "/x/healthz", host)).status).toBe(404);
    const around = await raw("POST", "/zz/a2a/echo", host, { ...headers, Authorization: `Bearer ${key}` }, getTask);
    expect(around.status).toBe(404);
    expect(JSON.parse(around.body).error.data[0].metadata.path).toBe("/zz/a2a/echo");
  }
});

test("with a short Host header the real paths are served as usual, body included", async () => {
  for (const host of ["a", "abcd", "gateway.example"]) {
    expect((await raw("GET", "/healthz", host)).status).toBe(200);
    const answer = await raw("POST", "/a2a/echo", host, { ...headers, Authorization: `Bearer ${key}` }, getTask);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).error.code).toBe(-32001);
  }
});
