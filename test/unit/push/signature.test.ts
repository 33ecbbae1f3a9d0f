// Unit tests of Standard Webhooks signing: the published test vector, round trip, rotation, tampering, time window.
import { describe, expect, test } from "bun:test";
import { InvalidSigningSecretError, signingKey, signWebhook, verifyWebhook } from "../../../src/push/signature.ts";

// The Standard Webhooks reference vector: what any receiver library computes for these inputs.
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

const NOW = 1_750_000_000;
const BODY = JSON.stringify({
  statusUpdate: { taskId: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } },
});
const OLD = "whsec_c2VjcmV0LW51bWJlci1vbmUtZm9yLXRlc3Rz";
const NEW = "plain text secret two";

describe("signWebhook", () => {
  test("reproduces the Standard Webhooks test vector", () => {
    const headers = signWebhook(VECTOR.id, VECTOR.timestamp, VECTOR.body, [VECTOR.secret]);
    expect(headers).toEqual({
      "webhook-id": VECTOR.id,
      "webhook-timestamp": "1614265330",
      "webhook-signature": VECTOR.signature,
    });
  });

  test("two secrets give two space-separated signatures, in order", () => {
    const both = signWebhook("d-1", NOW, BODY, [OLD, NEW])["webhook-signature"]!.split(" ");
    expect(both).toHaveLength(2);
    expect(both[0]).toBe(signWebhook("d-1", NOW, BODY, [OLD])["webhook-signature"]!);
    expect(both[1]).toBe(signWebhook("d-1", NOW, BODY, [NEW])["webhook-signature"]!);
  });

  test("without a secret the id and timestamp are still sent, the signature is not", () => {
    expect(signWebhook("d-1", NOW + 0.9, BODY, [])).toEqual({ "webhook-id": "d-1", "webhook-timestamp": String(NOW) });
  });
});

describe("verifyWebhook", () => {
  const signed = signWebhook("d-1", NOW, BODY, [OLD, NEW]);

  test("the published vector verifies", () => {
    const headers = {
      "webhook-id": VECTOR.id,
      "webhook-timestamp": String(VECTOR.timestamp),
      "webhook-signature": VECTOR.signature,
    };
    expect(verifyWebhook(headers, VECTOR.body, [VECTOR.secret], 300, VECTOR.timestamp)).toEqual({
      ok: true,
      id: VECTOR.id,
      timestampSeconds: VECTOR.timestamp,
    });
  });

  test("a round trip verifies with either secret alone, from a record or from Fetch Headers, string or bytes", () => {
    expect(verifyWebhook(signed, BODY, [OLD], 300, NOW).ok).toBe(true);
    expect(verifyWebhook(signed, BODY, [NEW], 300, NOW).ok).toBe(true);
    expect(verifyWebhook(new Headers({ ...signed }), new TextEncoder().encode(BODY), [NEW], 300, NOW).ok).toBe(true);
  });

  test("rotation: a receiver that already holds the new secret accepts a sender that signs with the old one", () => {
    const fromOld = signWebhook("d-2", NOW, BODY, [OLD]);
    expect(verifyWebhook(fromOld, BODY, [NEW, OLD], 300, NOW).ok).toBe(true);
  });

  test("a changed body, id, timestamp or signature is refused", () => {
    const refuse = (headers: Record<string, string>, body: string) =>
      verifyWebhook(headers, body, [OLD, NEW], 300, NOW);
    const tampered = `${BODY.slice(0, -2)} }`;
    expect(refuse({ ...signed }, tampered)).toEqual({ ok: false, reason: "no matching signature" });
    expect(refuse({ ...signed, "webhook-id": "d-9" }, BODY).ok).toBe(false);
    expect(refuse({ ...signed, "webhook-timestamp": String(NOW - 1) }, BODY).ok).toBe(false);
    const flipped = signed["webhook-signature"]!.replace(/^v1,./, (s) => `v1,${s.endsWith("A") ? "B" : "A"}`);
    const first = flipped.split(" ")[0]!;
    expect(refuse({ ...signed, "webhook-signature": first }, BODY).ok).toBe(false);
  });

  test("the wrong secret is refused", () => {
    expect(verifyWebhook(signed, BODY, ["whsec_b3RoZXI="], 300, NOW)).toEqual({
      ok: false,
      reason: "no matching signature",
    });
  });

  test("timestamps outside the tolerance are refused, both ways", () => {
    expect(verifyWebhook(signed, BODY, [OLD], 300, NOW + 300).ok).toBe(true);
    expect(verifyWebhook(signed, BODY, [OLD], 300, NOW + 301)).toEqual({
      ok: false,
      reason: "timestamp outside tolerance",
    });
    expect(verifyWebhook(signed, BODY, [OLD], 300, NOW - 301).ok).toBe(false);
  });

  test("missing headers, a malformed timestamp and unknown versions are refused", () => {
    const { "webhook-signature": _, ...unsigned } = signed;
    expect(verifyWebhook(unsigned, BODY, [OLD], 300, NOW)).toEqual({ ok: false, reason: "missing webhook headers" });
    expect(verifyWebhook({ ...signed, "webhook-timestamp": "1e9" }, BODY, [OLD], 300, NOW)).toEqual({
      ok: false,
      reason: "invalid timestamp",
    });
    const v2 = signed["webhook-signature"]!.replaceAll("v1,", "v2,");
    expect(verifyWebhook({ ...signed, "webhook-signature": v2 }, BODY, [OLD], 300, NOW).ok).toBe(false);
    expect(verifyWebhook(signed, BODY, [], 300, NOW)).toEqual({ ok: false, reason: "no secret configured" });
  });
});

describe("signingKey", () => {
  test("whsec_ secrets are base64-decoded, other strings are their UTF-8 bytes", () => {
    expect(signingKey("whsec_aGVsbG8=").toString("utf8")).toBe("hello");
    expect(signingKey("héllo")).toEqual(Buffer.from("héllo", "utf8"));
    expect(signingKey("aGVsbG8=").toString("utf8")).toBe("aGVsbG8=");
  });
  test("whsec_ followed by anything but base64 is a configuration error", () => {
    expect(() => signingKey("whsec_")).toThrow(InvalidSigningSecretError);
    expect(() => signingKey("whsec_not base64!")).toThrow(InvalidSigningSecretError);
  });
});
