// CardSigner: EdDSA and ES256 signatures that jose verifies over the JCS form, the thumbprint kid, refused keys.
import { expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { calculateJwkThumbprint, compactVerify, createLocalJWKSet } from "jose";
import { loadConfig } from "../../../src/config/index.ts";
import { buildAgentCard } from "../../../src/gateway/agent-card.ts";
import { CardSigner, CardSigningKeyError, canonicalCard, withoutEmpty } from "../../../src/gateway/card-signer.ts";

const profile = loadConfig({ env: {} }).profiles[0]!;
const card = buildAgentCard(profile, "https://agents.example.com");
const pem = (type: "ed25519" | "ec" | "rsa") => {
  const { privateKey } =
    type === "ec"
      ? generateKeyPairSync("ec", { namedCurve: "P-256" })
      : type === "rsa"
        ? generateKeyPairSync("rsa", { modulusLength: 2048 })
        : generateKeyPairSync("ed25519");
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
};

test("the canonical form sorts keys, has no whitespace, leaves signatures and empty members out, keeps false", () => {
  const text = canonicalCard({ ...card, signatures: [{ protected: "x", signature: "y" }] });
  expect(text).not.toContain("signatures");
  expect(text.startsWith('{"capabilities":{"extendedAgentCard":false,"pushNotifications":true')).toBe(true);
  // The security requirements hold only empty scope lists: A2A 8.4.1 leaves them out of the signed form.
  const { securityRequirements, ...rest } = card;
  expect(securityRequirements?.length).toBeGreaterThan(0);
  expect(JSON.parse(text)).toEqual(rest);
  expect(canonicalCard({ ...card, description: "", iconUrl: "", skills: card.skills })).toBe(
    canonicalCard({ ...rest, description: "" }),
  );
  expect(withoutEmpty({ a: "", b: [], c: {}, d: [{ e: null }], f: false, g: 0, h: [1, ""] })).toEqual({
    f: false,
    g: 0,
    h: [1],
  });
});

for (const [type, alg] of [
  ["ed25519", "EdDSA"],
  ["ec", "ES256"],
] as const) {
  test(`${alg}: jose verifies the signature; the kid is the key's RFC 7638 thumbprint`, async () => {
    const signer = CardSigner.fromPem(pem(type));
    expect(signer.alg).toBe(alg);
    const jwks = signer.jwks();
    expect(signer.kid).toBe(await calculateJwkThumbprint(jwks.keys[0] as Parameters<typeof calculateJwkThumbprint>[0]));
    const signature = signer.sign(card);
    const payload = Buffer.from(canonicalCard(card)).toString("base64url");
    const keys = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
    const verified = await compactVerify(`${signature.protected}.${payload}.${signature.signature}`, keys);
    expect(verified.protectedHeader).toEqual({ alg, kid: signer.kid, typ: "JOSE" });
    const other = Buffer.from(canonicalCard({ ...card, name: "other" })).toString("base64url");
    await expect(compactVerify(`${signature.protected}.${other}.${signature.signature}`, keys)).rejects.toThrow();
  });
}

test("an RSA key or text that is no key is refused with a reason", () => {
  expect(() => CardSigner.fromPem(pem("rsa"))).toThrow(CardSigningKeyError);
  expect(() => CardSigner.fromPem("not a key")).toThrow("not a PEM private key");
});
