// Signs agent cards (A2A §8.4): a JWS (RFC 7515) over the RFC 8785 (JCS) canonical JSON of the card without
// `signatures`, with an ES256 (EC P-256) or EdDSA (Ed25519) key; publishes the public key as a JWKS.
import { createHash, createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject, sign } from "node:crypto";
import canonicalize from "canonicalize";
import type { AgentCard, AgentCardSignature } from "../protocol/index.ts";

/** Where the gateway serves the JWKS that verifies its cards. */
export const JWKS_PATH = "/.well-known/jwks.json";

export type CardSigningAlg = "ES256" | "EdDSA";

/** The signing key cannot be used: not a PEM private key, or not EC P-256 / Ed25519. */
export class CardSigningKeyError extends Error {
  override readonly name = "CardSigningKeyError";
}

/**
 * A value without its empty members, as A2A 8.4.1 canonicalizes a card: "", null, empty lists and empty objects are
 * dropped (recursively, so an object left empty is dropped too); `false` and 0 stay. Undefined for an empty value.
 */
export function withoutEmpty(value: unknown): unknown {
  if (value === "" || value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const items = value.map(withoutEmpty).filter((item) => item !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value)
      .map(([key, member]) => [key, withoutEmpty(member)] as const)
      .filter(([, member]) => member !== undefined);
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return value;
}

/**
 * The canonical bytes a card signature covers (A2A 8.4.1): the card without `signatures` and without its empty
 * (default-valued) members, in JCS form (RFC 8785). Only the proto's fields may be in `card`: a verifier parses the card
 * with the proto first and drops every other field.
 */
export function canonicalCard(card: AgentCard): string {
  const { signatures: _ignored, ...unsigned } = card;
  const text = canonicalize(withoutEmpty(unsigned) ?? {});
  if (text === undefined) throw new TypeError("an agent card must be a JSON object");
  return text;
}

/** RFC 7638 thumbprint of a public JWK (EC or OKP), base64url. */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const members =
    jwk.kty === "EC" ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash("sha256").update(JSON.stringify(members)).digest("base64url");
}

function algOf(key: KeyObject): CardSigningAlg {
  if (key.asymmetricKeyType === "ed25519") return "EdDSA";
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") return "ES256";
  throw new CardSigningKeyError(
    `the card signing key must be EC P-256 (ES256) or Ed25519 (EdDSA), not ${key.asymmetricKeyType ?? "unknown"}`,
  );
}

export class CardSigner {
  readonly alg: CardSigningAlg;
  readonly kid: string;
  private readonly publicJwk: JsonWebKey;

  private constructor(
    private readonly key: KeyObject,
    kid: string,
  ) {
    this.alg = algOf(key);
    this.publicJwk = createPublicKey(key).export({ format: "jwk" });
    this.kid = kid !== "" ? kid : jwkThumbprint(this.publicJwk);
  }

  /** From a PEM private key (PKCS#8 or SEC1); `kid` empty = the key's RFC 7638 thumbprint. */
  static fromPem(pem: string, kid = ""): CardSigner {
    let key: KeyObject;
    try {
      key = createPrivateKey(pem);
    } catch (error) {
      throw new CardSigningKeyError("the card signing key is not a PEM private key", { cause: error });
    }
    return new CardSigner(key, kid);
  }

  /** The signature entry of a card; `jku` is the absolute URL of the JWKS, when known. */
  sign(card: AgentCard, jku?: string): AgentCardSignature {
    const header = { alg: this.alg, kid: this.kid, typ: "JOSE", ...(jku === undefined ? {} : { jku }) };
    const protectedHeader = Buffer.from(JSON.stringify(header)).toString("base64url");
    const payload = Buffer.from(canonicalCard(card)).toString("base64url");
    const input = Buffer.from(`${protectedHeader}.${payload}`);
    const signature =
      this.alg === "ES256"
        ? sign("sha256", input, { key: this.key, dsaEncoding: "ieee-p1363" })
        : sign(null, input, this.key);
    return { protected: protectedHeader, signature: signature.toString("base64url") };
  }

  /** The JWKS that publishes the public key. */
  jwks(): { keys: JsonWebKey[] } {
    return { keys: [{ ...this.publicJwk, kid: this.kid, alg: this.alg, use: "sig" }] };
  }
}
