// A client that keeps sending 1 MB messages through a real gateway and actors: once its tasks hold its
// clients.maxStoredBytes it is refused (503 CLIENT_STORAGE_LIMIT_EXCEEDED, Retry-After, RetryInfo, nothing stored)
// while another client is served; when the retention pass has deleted its finished tasks it is served again. Redis's
// used_memory grows by no more than the budget plus the documented overhead.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { tenancyViolations } from "../../faults/invariants.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { waitFor } from "../actors/harness.ts";
import { errorInfo, message, type RpcAnswer, retryInfo, rpc } from "../gateway/harness.ts";
import type { Running } from "../multi/installation.ts";
import { type TenancyInstallation, tenancyInstallation, usedMemory } from "./setup.ts";

const MiB = 1024 * 1024;
const BUDGET = 12 * MiB;
/** Just under server.maxBodyBytes with the JSON-RPC envelope around it. */
const MESSAGE_BYTES = 1_000_000;
/**
 * What the counter may pass the budget by: the output of the one run in flight when it was reached (echo writes its
 * answer as an artifact and as a journal entry), which actors' writes are counted for but never refused.
 */
const ONE_RUN_OUTPUT = 2 * MESSAGE_BYTES + 64 * 1024;
/**
 * What Redis's memory may add on top of the counted bytes (docs/operations.md): the allocator's size classes for
 * values of a megabyte (up to a quarter more), the request and reply buffers of the calls in flight (a few MB), and
 * the keys, indexes and dedup records (about a kilobyte per task).
 */
const OVERHEAD = (BUDGET + ONE_RUN_OUTPUT) / 4 + 6 * MiB;

let server: TestRedis;
let redis: Redis;
let setup: TenancyInstallation;
let gateway: Running & { url: string };

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  setup = await tenancyInstallation(
    server.url,
    { retentionSeconds: 10, journalRetentionSeconds: 10 },
    { A2A_CLIENTS_MAX_STORED_BYTES: String(BUDGET) },
  );
  [gateway] = await Promise.all([setup.inst.gateway(), setup.inst.work("bun", 2)]);
}, 60_000);

afterAll(async () => {
  await setup?.close();
  await server?.stop();
}, 30_000);

test("at its storage budget a client is refused and nothing stored; another is served; after purge it is served again", async () => {
  const { keys } = setup.inst;
  const heavy = await setup.inst.client();
  const light = await setup.inst.client();
  const shard = keys.shardOf(heavy.id);
  const counter = () => redis.hget(keys.bytes(shard), `client:${heavy.id}`).then(Number);
  const send = (who: { key: string }, text: string, msg = message(text)) =>
    rpc(gateway.url, "SendMessage", { message: msg }, { key: who.key });
  // warm up both processes' paths, then measure from here
  expect((await send(light, "warm up")).body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  const baseline = await usedMemory(redis);
  let peakMemory = baseline;
  let peakCounter = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakMemory = Math.max(peakMemory, await usedMemory(redis));
      peakCounter = Math.max(peakCounter, await counter());
      await Bun.sleep(20);
    }
  })();

  // Sequential blocking sends of 1 MB until the budget refuses one.
  let refused: { answer: RpcAnswer; messageId: string } | undefined;
  let accepted = 0;
  for (let i = 0; i < 40 && !refused; i++) {
    const msg = message(String(i % 10).repeat(MESSAGE_BYTES));
    const answer = await send(heavy, "", msg);
    if (answer.body?.result) {
      expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
      accepted += 1;
    } else refused = { answer, messageId: msg.messageId };
  }
  if (!refused) throw new Error(`never refused after ${accepted} accepted messages`);
  const { answer } = refused;
  expect(answer.status).toBe(503);
  expect(answer.body.error.code).toBe(-32000);
  expect(errorInfo(answer).reason).toBe("CLIENT_STORAGE_LIMIT_EXCEEDED");
  expect(errorInfo(answer).metadata).toEqual({ clientId: heavy.id });
  expect(answer.body.error.message).toContain("clients.maxStoredBytes");
  expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(retryInfo(answer)?.retryDelay).toMatch(/^\d+s$/);
  // nothing of the refused message was stored: no dedup record, no task in the client's index that holds it
  expect(await redis.exists(keys.dedup(shard, heavy.id, "echo", refused.messageId))).toBe(0);
  const listed = await rpc(gateway.url, "ListTasks", { pageSize: 100, historyLength: 1 }, { key: heavy.key });
  expect(JSON.stringify(listed.body.result)).not.toContain(refused.messageId);

  // another client is served meanwhile
  expect((await send(light, "still served")).body.result.task.status.state).toBe("TASK_STATE_COMPLETED");

  // The retention pass deletes the finished tasks after their 10 s and gives their bytes back: the signal the accept
  // script reads is the counter, so wait for it to leave room for one more message, then send one.
  await waitFor(async () => (await counter()) + ONE_RUN_OUTPUT < BUDGET, 60_000, "the heavy client's tasks purged");
  const again = await send(heavy, "x".repeat(MESSAGE_BYTES));
  expect(again.body.result?.task.status.state).toBe("TASK_STATE_COMPLETED");

  sampling = false;
  await sampler;
  const growth = peakMemory - baseline;
  expect(peakCounter).toBeLessThanOrEqual(BUDGET + ONE_RUN_OUTPUT);
  expect(growth).toBeLessThanOrEqual(BUDGET + ONE_RUN_OUTPUT + OVERHEAD);
  expect(await tenancyViolations(redis, keys.prefix)).toEqual([]);
  console.log(
    `FIGURES ${JSON.stringify({
      scenario: "storage-budget",
      budgetBytes: BUDGET,
      acceptedBeforeRefusal: accepted,
      peakCounterBytes: peakCounter,
      usedMemoryGrowthBytes: growth,
      boundBytes: BUDGET + ONE_RUN_OUTPUT + OVERHEAD,
    })}`,
  );
}, 120_000);
