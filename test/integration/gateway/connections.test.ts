// A gateway process holds the same Redis connections however many requests wait: 1,000 blocking SendMessage calls
// waiting at once use no more connections (CLIENT LIST) than one, and its gRPC server opens none of its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { closeGrpcClients, grpcCall, openGrpcStream } from "../../support/grpc-client.ts";
import { eventually, type Harness, message, startHarness } from "./harness.ts";

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness({
    env: {
      A2A_SERVER_MAX_WAITING_REQUESTS: "2000",
      A2A_CLIENTS_MAX_WAITING_REQUESTS: "100000",
      A2A_SERVER_BLOCKING_WAIT_SECONDS: "30",
    },
    grpc: true,
  });
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  closeGrpcClients();
  await h.stop();
});

/**
 * One HTTP/1.1 request on a socket of its own: fetch pools its connections (a few hundred at most), and this test
 * needs every request in flight at once.
 */
function rawSend(port: number, key: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("connect", () => {
      socket.write(
        "POST /a2a/echo HTTP/1.1\r\n" +
          `Host: 127.0.0.1:${port}\r\n` +
          "Content-Type: application/json\r\n" +
          `Authorization: Bearer ${key}\r\n` +
          "A2A-Version: 1.0\r\n" +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          "Connection: close\r\n\r\n" +
          body,
      );
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      resolve({ status: Number(text.split(" ")[1]), body: text.slice(split + 4) });
    });
  });
}

function send(): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: message("wait") } });
  return rawSend(h.gateway.port, client.key, body);
}

/** Connections to the test's Redis: all of them, and those the gateway named. */
async function connections(): Promise<{ total: number; gateway: number }> {
  const list = (await h.redis.client("LIST")) as string;
  const lines = list.split("\n").filter((line) => line.trim() !== "");
  return { total: lines.length, gateway: lines.filter((line) => / name=a2a-gateway/.test(line)).length };
}

const waiting = () => h.redis.zcard(h.keys.waiting());

test("1,000 waiting requests use no more Redis connections than one", async () => {
  const one = send();
  await eventually(async () => (await waiting()) === 1);
  const withOne = await connections();
  await h.actor.complete(await h.actor.takeOne({ clientId: client.id }));
  expect((await one).status).toBe(200);

  const many = Array.from({ length: 1000 }, () => send());
  await eventually(async () => (await waiting()) === 1000, 20_000);
  const withMany = await connections();
  expect(withMany.total).toBeLessThanOrEqual(withOne.total);
  expect(withMany.gateway).toBe(withOne.gateway);
  expect(withOne.gateway).toBe(2);

  const claims = await h.actor.take(1000, { clientId: client.id }, 10_000);
  expect(claims).toHaveLength(1000);
  await Promise.all(claims.map((claim) => h.actor.complete(claim)));
  const answers = await Promise.all(many);
  expect(answers.every((answer) => answer.status === 200)).toBe(true);
  const states = new Set(answers.map((answer) => JSON.parse(answer.body).result.task.status.state));
  expect([...states]).toEqual(["TASK_STATE_COMPLETED"]);
  expect(await waiting()).toBe(0);
}, 60_000);

test("gRPC calls waiting and streaming use the gateway's two connections, no more", async () => {
  const address = h.gateway.grpcAddress ?? "";
  const many = Array.from({ length: 200 }, () =>
    grpcCall(address, "SendMessage", { message: message("wait over gRPC") }, { key: client.key }),
  );
  const stream = await openGrpcStream(address, "SendStreamingMessage", { message: message("stream") }, client);
  await stream.waitForEvents(1, 10_000);
  await eventually(async () => (await waiting()) === 200, 20_000);
  expect((await connections()).gateway).toBe(2);

  const claims = await h.actor.take(201, { clientId: client.id }, 10_000);
  await Promise.all(claims.map((claim) => h.actor.complete(claim)));
  const answers = await Promise.all(many);
  expect(answers.map((answer) => answer.body.task?.status?.state)).toEqual(
    Array.from({ length: 200 }, () => "TASK_STATE_COMPLETED"),
  );
  await stream.closed;
  expect(stream.error).toBeUndefined();
  expect(stream.events.at(-1)?.statusUpdate?.status?.state).toBe("TASK_STATE_COMPLETED");
  expect(await waiting()).toBe(0);
}, 60_000);
