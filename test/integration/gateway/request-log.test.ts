// The request log line (debug) names the binding a request came by, with its A2A method, client, task, code and
// reason; the key never appears in it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { createLogger } from "../../../src/log.ts";
import { eventually, type Harness, message, rest, rpc, startHarness } from "./harness.ts";

let h: Harness;
let gateway: RunningGateway;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line));
      done();
    },
  });
  gateway = await startGateway(h.config, { port: 0, logger: createLogger("request-log-test", "debug", sink) });
});

afterAll(async () => {
  await gateway.stop();
  await h.stop();
});

const requests = () => lines.filter((line) => line.msg === "request");

test("each binding's request is one line naming its binding, method, client, task and code", async () => {
  const { id: clientId, key } = await h.client();
  const sent = await rest(
    gateway.url,
    "POST",
    "/message:send",
    { message: message("logged"), configuration: { returnImmediately: true } },
    { key },
  );
  const taskId: string = sent.body.task.id;
  await rpc(gateway.url, "GetTask", { id: taskId }, { key });
  await rest(gateway.url, "GET", "/tasks/no-such-task", undefined, { key });
  await eventually(() => requests().length >= 3);
  const [send, get, missing] = requests();
  expect(send).toMatchObject({ binding: "rest", method: "SendMessage", clientId, taskId, code: 0 });
  expect(get).toMatchObject({ binding: "jsonrpc", method: "GetTask", clientId, taskId, code: 0 });
  expect(missing).toMatchObject({ binding: "rest", method: "GetTask", code: -32001, reason: "TASK_NOT_FOUND" });
  expect(JSON.stringify(lines)).not.toContain(key);
});
