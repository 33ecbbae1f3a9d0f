// What the gRPC binding adds to the shared request steps: the profile a call addresses (its tenant, or the a2a-profile
// metadata, else the first profile), credentials checked before the message is decoded, and a stream that ends with a
// status when the gateway cuts it (a revoked key) while its task goes on.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { closeGrpcClients, errorAnswer, grpcCall, openGrpcStream } from "../../support/grpc-client.ts";
import { type Harness, message, profile, startHarness } from "./harness.ts";

let h: Harness;
let address: string;
let key: string;

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), profile("second")], grpc: true });
  await h.actor.live();
  address = h.gateway.grpcAddress ?? "";
  ({ key } = await h.client());
});

afterAll(async () => {
  closeGrpcClients();
  await h.stop();
});

const send = (text: string) => ({ message: message(text), configuration: { returnImmediately: true } });

async function profileOf(taskId: string): Promise<string | null> {
  return await h.redis.hget(h.keys.task(0, taskId), "prof");
}

test("the tenant names the profile, or the a2a-profile metadata; neither: the first profile", async () => {
  const byTenant = await grpcCall(address, "SendMessage", send("t"), { key, profile: "second" });
  expect(await profileOf(byTenant.body.task.id)).toBe("second");
  const byMetadata = await grpcCall(address, "SendMessage", send("m"), { key, metadata: { "a2a-profile": "second" } });
  expect(await profileOf(byMetadata.body.task.id)).toBe("second");
  const neither = await grpcCall(address, "SendMessage", send("n"), { key });
  expect(await profileOf(neither.body.task.id)).toBe("echo");
});

test("an unknown profile is NOT_FOUND; a tenant and a2a-profile that differ are INVALID_ARGUMENT", async () => {
  const unknown = await grpcCall(address, "GetTask", { id: "t" }, { key, profile: "nobody" });
  expect(unknown.status).toBe(status.NOT_FOUND);
  expect(unknown.body.error.details[0]).toMatchObject({ reason: "NOT_FOUND", metadata: { profile: "nobody" } });
  const both = await grpcCall(
    address,
    "GetTask",
    { id: "t" },
    { key, profile: "echo", metadata: { "a2a-profile": "second" } },
  );
  expect(both.status).toBe(status.INVALID_ARGUMENT);
  expect(both.body.error.message).toContain("differ");
});

test("bytes that are no request: UNAUTHENTICATED without a key (nothing decoded), INVALID_ARGUMENT with one", async () => {
  const raw = new Client(address, credentials.createInsecure());
  const call = (metadata: Metadata) =>
    new Promise<ServiceError>((resolve) => {
      raw.makeUnaryRequest(
        "/lf.a2a.v1.A2AService/GetTask",
        (bytes: Buffer) => bytes,
        (bytes: Buffer) => bytes,
        Buffer.from([0x12, 0xff, 0xff, 0xff, 0x0f]),
        metadata,
        (error) => resolve(error as ServiceError),
      );
    });
  try {
    const anonymous = errorAnswer(await call(new Metadata()));
    expect(anonymous.status).toBe(status.UNAUTHENTICATED);
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="a2a-runtime"');
    const keyed = new Metadata();
    keyed.set("authorization", `Bearer ${key}`);
    keyed.set("a2a-version", "1.0");
    const garbage = errorAnswer(await call(keyed));
    expect(garbage.status).toBe(status.INVALID_ARGUMENT);
    expect(garbage.body.error.details[0]).toMatchObject({ reason: "INVALID_REQUEST" });
    expect(garbage.body.error.message).toContain("not a valid lf.a2a.v1.GetTaskRequest");
  } finally {
    raw.close();
  }
});

test("a revoked key's stream ends with UNAUTHENTICATED; its task goes on", async () => {
  const client = await h.client();
  const stream = await openGrpcStream(address, "SendStreamingMessage", { message: message("watch") }, client);
  await stream.waitForEvents(1, 10_000);
  const taskId: string = stream.events[0].task.id;
  await h.clients.revoke(client.id);
  await stream.closed;
  expect(stream.error?.status).toBe(status.UNAUTHENTICATED);
  const claim = await h.actor.takeOne({ taskId }, 10_000);
  await h.actor.complete(claim);
  expect(await h.redis.hget(h.keys.task(0, taskId), "state")).toBe("TASK_STATE_COMPLETED");
});
