// Credentials from Authorization: Bearer or X-API-Key; lookups cached for at most the TTL (so a revoked key stops
// within it), shared by concurrent requests; a forbidden profile is PermissionDenied.
import { expect, test } from "bun:test";
import { AuthenticationBusyError, Authenticator, credentialsOf } from "../../../src/gateway/index.ts";
import type { ClientRecord } from "../../../src/journal/index.ts";
import { PermissionDeniedError, StoreUnavailableError, UnauthenticatedError } from "../../../src/protocol/index.ts";

class FakeRegistry {
  lookups = 0;
  readonly records = new Map<string, ClientRecord>();
  failure: Error | undefined;
  async authenticate(apiKey: string): Promise<ClientRecord | undefined> {
    this.lookups += 1;
    await Bun.sleep(1);
    if (this.failure) throw this.failure;
    return this.records.get(apiKey);
  }
}

const record = (profiles: string[] = ["*"]): ClientRecord => ({
  id: "c-1",
  name: "c",
  profiles,
  limit: 0,
  revoked: false,
  createdAt: "",
});

test("credentials come from a Bearer token or the X-API-Key header", () => {
  expect(credentialsOf(new Headers({ Authorization: "Bearer k1" }))).toBe("k1");
  expect(credentialsOf(new Headers({ Authorization: "bearer   k2 " }))).toBe("k2");
  expect(credentialsOf(new Headers({ "X-API-Key": "k3" }))).toBe("k3");
  expect(credentialsOf(new Headers({ Authorization: "Basic abc" }))).toBeUndefined();
  expect(credentialsOf(new Headers({ Authorization: "Bearer a b" }))).toBeUndefined();
  expect(credentialsOf(new Headers())).toBeUndefined();
});

test("missing or unknown credentials are Unauthenticated", async () => {
  const auth = new Authenticator(new FakeRegistry());
  await expect(auth.authenticate(new Headers())).rejects.toBeInstanceOf(UnauthenticatedError);
  await expect(auth.authenticate(new Headers({ "X-API-Key": "nope" }))).rejects.toBeInstanceOf(UnauthenticatedError);
});

test("a lookup is reused within the TTL and shared by concurrent requests; after the TTL a revocation shows", async () => {
  const registry = new FakeRegistry();
  registry.records.set("k", record());
  const auth = new Authenticator(registry, { ttlMs: 100 });
  const headers = new Headers({ Authorization: "Bearer k" });
  await Promise.all(Array.from({ length: 50 }, () => auth.authenticate(headers)));
  expect(registry.lookups).toBe(1);
  registry.records.delete("k");
  expect((await auth.authenticate(headers)).id).toBe("c-1");
  await Bun.sleep(120);
  await expect(auth.authenticate(headers)).rejects.toBeInstanceOf(UnauthenticatedError);
  expect(registry.lookups).toBe(2);
});

test("a store failure is a refusal and is not cached", async () => {
  const registry = new FakeRegistry();
  registry.failure = new Error("connect ECONNREFUSED 127.0.0.1:6379");
  const auth = new Authenticator(registry);
  const headers = new Headers({ Authorization: "Bearer k" });
  await expect(auth.authenticate(headers)).rejects.toBeInstanceOf(StoreUnavailableError);
  await Bun.sleep(5);
  registry.failure = undefined;
  registry.records.set("k", record());
  expect((await auth.authenticate(headers)).id).toBe("c-1");
});

test("a client may use the profiles on its record, or all with *", () => {
  const auth = new Authenticator(new FakeRegistry());
  expect(() => auth.authorize(record(["*"]), "echo")).not.toThrow();
  expect(() => auth.authorize(record(["echo"]), "echo")).not.toThrow();
  expect(() => auth.authorize(record(["other"]), "echo")).toThrow(PermissionDeniedError);
});

test("lookups of unknown keys past maxPending are refused at once; known keys in the cache still pass", async () => {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const registry = new FakeRegistry();
  registry.records.set("known", record());
  const slow = {
    lookups: 0,
    async authenticate(apiKey: string): Promise<ClientRecord | undefined> {
      this.lookups += 1;
      if (apiKey !== "known") await gate;
      return registry.records.get(apiKey);
    },
  };
  const auth = new Authenticator(slow, { maxPending: 3 });
  const known = new Headers({ Authorization: "Bearer known" });
  expect((await auth.authenticate(known)).id).toBe("c-1");
  const stuck = [1, 2, 3].map((n) =>
    auth.authenticate(new Headers({ Authorization: `Bearer made-up-${n}` })).then(
      () => "authenticated",
      (error: unknown) => error,
    ),
  );
  await expect(auth.authenticate(new Headers({ Authorization: "Bearer made-up-4" }))).rejects.toBeInstanceOf(
    AuthenticationBusyError,
  );
  expect(slow.lookups).toBe(4);
  expect((await auth.authenticate(known)).id).toBe("c-1");
  release();
  for (const outcome of await Promise.all(stuck)) expect(outcome).toBeInstanceOf(UnauthenticatedError);
  await expect(auth.authenticate(new Headers({ Authorization: "Bearer made-up-5" }))).rejects.toBeInstanceOf(
    UnauthenticatedError,
  );
});
