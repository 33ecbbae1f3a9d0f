// guardrailsForProfile builds exactly the checks a profile configures, composed under guardrails.timeoutMs, and
// refuses to build (naming the profile) when a pattern, the output schema or the moderation key variable is unusable.
import { describe, expect, test } from "bun:test";
import { GuardrailConfigError, guardrailsForProfile } from "../../../src/guardrail/index.ts";
import { artifact, context, profileWith, reasonOf, textOutput } from "./fixtures.ts";

/** A fetch that records its requests and answers `flagged` (no network). */
function fakeModeration(flagged: boolean) {
  const requests: { url: string; init: RequestInit | undefined }[] = [];
  const fetchFake = (async (input: string | URL | Request, init?: RequestInit) => {
    requests.push({ url: String(input), init });
    return Response.json({ results: [{ flagged, categories: { hate: flagged } }] });
  }) as typeof fetch;
  return { fetchFake, requests };
}

describe("guardrailsForProfile", () => {
  test("a profile without guardrails or outputSchema has none", () => {
    expect(guardrailsForProfile(profileWith())).toBeUndefined();
  });

  test("each setting adds its built-in", () => {
    const names = (guardrails: Parameters<typeof profileWith>[0], extra: Parameters<typeof profileWith>[1] = {}) =>
      guardrailsForProfile(profileWith(guardrails, extra), { env: { KEY: "k" } })?.name;
    expect(names({ denyPatterns: ["x"] })).toBe("all(deny-patterns)");
    expect(names({ personalData: true })).toBe("all(personal-data)");
    expect(names({ maxLength: 5 })).toBe("all(max-length)");
    expect(names({}, { outputSchema: { type: "object" } })).toBe("all(output-schema)");
    expect(names({ moderation: { baseUrl: "http://127.0.0.1:9", timeoutMs: 100 } })).toBe("all(moderation)");
    expect(
      names(
        {
          denyPatterns: ["x"],
          personalData: true,
          maxLength: 5,
          moderation: { baseUrl: "http://127.0.0.1:9", apiKeyEnv: "KEY", timeoutMs: 100 },
        },
        { outputSchema: {} },
      ),
    ).toBe("all(deny-patterns,personal-data,max-length,output-schema,moderation)");
  });

  test("the configured checks all apply", async () => {
    const { fetchFake } = fakeModeration(false);
    const profile = profileWith({ denyPatterns: ["/secret/i"], personalData: true, maxLength: 40 });
    const guardrail = guardrailsForProfile(profile, { fetch: fetchFake });
    if (guardrail === undefined) throw new Error("expected a guardrail");
    const check = (text: string) => guardrail.check(textOutput(text), context({ profile }));
    expect(await check("All good here.")).toEqual({ pass: true });
    expect(reasonOf(await check("The Secret is out."))).toStartWith("deny-patterns: ");
    expect(reasonOf(await check("Mail x.y@example.com"))).toStartWith("personal-data: ");
    expect(reasonOf(await check("a".repeat(41)))).toStartWith("max-length: ");
  });

  test("the output schema applies to data parts", async () => {
    const profile = profileWith({}, { outputSchema: { type: "object", required: ["ok"] } });
    const guardrail = guardrailsForProfile(profile);
    const output = textOutput("", artifact({ data: { nope: 1 } }));
    expect(reasonOf((await guardrail?.check(output, context({ profile }))) ?? { pass: true })).toStartWith(
      "output-schema: artifact 0 part 0: /ok: ",
    );
  });

  test("moderation sends the key from the named variable, and its fetch comes from deps", async () => {
    const { fetchFake, requests } = fakeModeration(true);
    const profile = profileWith({
      moderation: { baseUrl: "http://127.0.0.1:9/", model: "omni", apiKeyEnv: "MOD_KEY", timeoutMs: 1000 },
    });
    const guardrail = guardrailsForProfile(profile, { fetch: fetchFake, env: { MOD_KEY: "sk-test-123" } });
    const result = await guardrail?.check(textOutput("hello"), context({ profile }));
    expect(reasonOf(result ?? { pass: true })).toBe("moderation: moderation flagged the output (hate)");
    expect(reasonOf(result ?? { pass: true })).not.toContain("sk-test-123");
    expect(requests).toHaveLength(1);
    expect(requests[0]?.url).toBe("http://127.0.0.1:9/v1/moderations");
    expect(new Headers(requests[0]?.init?.headers).get("authorization")).toBe("Bearer sk-test-123");
    expect(JSON.parse(String(requests[0]?.init?.body))).toEqual({ model: "omni", input: "hello" });
  });

  test("guardrails.timeoutMs bounds every check", async () => {
    const hangingFetch = ((_input: string | URL | Request, init?: RequestInit) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      })) as typeof fetch;
    const profile = profileWith({ timeoutMs: 100, moderation: { baseUrl: "http://127.0.0.1:9", timeoutMs: 60_000 } });
    const guardrail = guardrailsForProfile(profile, { fetch: hangingFetch });
    const started = performance.now();
    const result = await guardrail?.check(textOutput("hello"), context({ profile }));
    expect(reasonOf(result ?? { pass: true })).toBe("moderation: timed out after 100 ms");
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test.each([
    [{ denyPatterns: ["/(/"] }, {}, "deny pattern 0"],
    [{}, { outputSchema: { type: "strnig" } }, "outputSchema does not compile"],
    [{ moderation: { baseUrl: "http://127.0.0.1:9", apiKeyEnv: "MISSING", timeoutMs: 100 } }, {}, "MISSING"],
    [{ moderation: { baseUrl: "http://127.0.0.1:9", apiKeyEnv: "EMPTY", timeoutMs: 100 } }, {}, "EMPTY"],
  ])("an unusable setting refuses to build, naming the profile (%j %j)", (guardrails, extra, problem) => {
    const build = () => guardrailsForProfile(profileWith(guardrails, extra), { env: { EMPTY: "" } });
    expect(build).toThrow(GuardrailConfigError);
    expect(build).toThrow(`profile "echo": `);
    expect(build).toThrow(problem);
  });
});
