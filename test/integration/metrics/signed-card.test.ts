// Signed agent cards over real HTTP: a gateway with server.cardSigningKeyEnv signs every card; the card verifies with
// an independent JOSE library (jose) against the JWKS the gateway publishes, and a tampered card does not. The
// signature covers the 1.0 AgentCard: a verifier reads the card as that message first, as the official SDKs do, so the
// three top-level fields for 0.3 clients (not AgentCard fields) are outside it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { type AgentCard as SdkAgentCard, verifyAgentCardSignature } from "@a2a-js/sdk";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from "jose";
import { loadConfig } from "../../../src/config/index.ts";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { createLogger } from "../../../src/log.ts";
import { startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";

let server: TestRedis;
let gateway: RunningGateway;
const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });

beforeAll(async () => {
  server = await startRedis();
  const env = {
    A2A_REDIS_URL: server.url,
    A2A_REDIS_KEY_PREFIX: testPrefix(),
    A2A_SERVER_HOST: "127.0.0.1",
    A2A_SERVER_CARD_SIGNING_KEY_ENV: "CARD_KEY",
    A2A_SERVER_CARD_SIGNING_KEY_ID: "card-key-1",
  };
  gateway = await startGateway(loadConfig({ env }), {
    port: 0,
    logger: createLogger("card-test", "error"),
    cardSigningKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  });
});

afterAll(async () => {
  await gateway.stop();
  await server.stop();
});

/** RFC 8785 for the values a card holds (strings, booleans, integers, arrays, objects), written independently. */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Drops "", null, empty lists and empty objects, recursively (A2A 8.4.1), written independently of the gateway's. */
function drop(value: unknown): unknown {
  if (value === "" || value === null) return undefined;
  if (Array.isArray(value)) {
    const kept = value.map(drop).filter((item) => item !== undefined);
    return kept.length === 0 ? undefined : kept;
  }
  if (typeof value === "object") {
    const kept: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value as object)) {
      const cleaned = drop(member);
      if (cleaned !== undefined) kept[key] = cleaned;
    }
    return Object.keys(kept).length === 0 ? undefined : kept;
  }
  return value;
}

type Card = Record<string, unknown> & { signatures?: { protected: string; signature: string }[] };

/** The fields of a served card that are not AgentCard fields. */
const V03_FIELDS = ["url", "preferredTransport", "protocolVersion"];

/** Verifies the first signature over the canonical form 8.4.1 describes (empty members dropped, then JCS). */
async function verify(card: Card, jwks: JSONWebKeySet) {
  const { signatures, ...rest } = card;
  const unsigned = Object.fromEntries(Object.entries(rest).filter(([key]) => !V03_FIELDS.includes(key)));
  const signature = signatures?.[0];
  if (!signature) throw new Error("the card carries no signature");
  const payload = Buffer.from(jcs(drop(unsigned))).toString("base64url");
  return await compactVerify(`${signature.protected}.${payload}.${signature.signature}`, createLocalJWKSet(jwks));
}

test("every card verifies with jose against the published JWKS; a tampered card does not", async () => {
  const jwksResponse = await fetch(`${gateway.url}/.well-known/jwks.json`);
  expect(jwksResponse.status).toBe(200);
  const jwks = (await jwksResponse.json()) as JSONWebKeySet;
  expect(jwks.keys).toHaveLength(1);
  expect(jwks.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", kid: "card-key-1", alg: "ES256", use: "sig" });
  expect(jwks.keys[0]).not.toHaveProperty("d");

  for (const path of ["/.well-known/agent-card.json", "/a2a/echo/.well-known/agent-card.json"]) {
    const card = (await (await fetch(`${gateway.url}${path}`)).json()) as Card;
    expect(card.signatures).toHaveLength(1);
    const header = decodeProtectedHeader(`${card.signatures?.[0]?.protected}..`);
    const base = String((card.supportedInterfaces as { url: string }[])[0]?.url).replace(/\/a2a\/echo$/, "");
    expect(header).toEqual({ alg: "ES256", kid: "card-key-1", typ: "JOSE", jku: `${base}/.well-known/jwks.json` });
    const verified = await verify(card, jwks);
    expect(verified.protectedHeader.kid).toBe("card-key-1");

    const tampered = { ...card, description: `${String(card.description)} (and more)` };
    await expect(verify(tampered, jwks)).rejects.toThrow();
    const otherInterface = { ...card, supportedInterfaces: [{ url: "https://elsewhere.example/a2a/echo" }] };
    await expect(verify(otherInterface, jwks)).rejects.toThrow();
  }
});

test("every card verifies with @a2a-js/sdk's own verifyAgentCardSignature; a tampered card does not", async () => {
  const jwks = (await (await fetch(`${gateway.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  const retrieveKey = async (kid: string) => {
    const jwk = jwks.keys.find((key) => key.kid === kid);
    if (!jwk) throw new Error(`no key ${kid}`);
    return jwk;
  };
  for (const path of ["/.well-known/agent-card.json", "/a2a/echo/.well-known/agent-card.json"]) {
    const card = (await (await fetch(`${gateway.url}${path}`)).json()) as SdkAgentCard;
    await verifyAgentCardSignature(retrieveKey)(card);
    await expect(verifyAgentCardSignature(retrieveKey)({ ...card, name: "someone else" })).rejects.toThrow();
  }
});

test("the signed payload is the card without signatures and without empty members (A2A 8.4.1), written independently", async () => {
  const card = (await (await fetch(`${gateway.url}/.well-known/agent-card.json`)).json()) as Card;
  const signature = card.signatures?.[0];
  if (!signature) throw new Error("the card carries no signature");
  const { signatures: _ignored, ...rest } = card;
  const unsigned = Object.fromEntries(Object.entries(rest).filter(([key]) => !V03_FIELDS.includes(key)));
  // The card's security requirements carry empty scope lists: they are not part of what is signed.
  expect(JSON.stringify(unsigned)).toContain('"list":[]');
  const expected = jcs(drop(unsigned));
  expect(expected).not.toContain('"list"');
  const jwks = (await (await fetch(`${gateway.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  const payload = Buffer.from(expected).toString("base64url");
  const verified = await compactVerify(
    `${signature.protected}.${payload}.${signature.signature}`,
    createLocalJWKSet(jwks),
  );
  expect(new TextDecoder().decode(verified.payload)).toBe(expected);
});
