// The deny-pattern guardrail: literal words match whole words case-insensitively, "/body/flags" patterns are regular
// expressions read exactly as config validation reads them; the reason names the pattern, never the matched text.
import { describe, expect, test } from "bun:test";
import { denyPatternsGuardrail, GuardrailConfigError } from "../../../src/guardrail/index.ts";
import { artifact, reasonOf, textOutput, verdict } from "./fixtures.ts";

describe("literal words", () => {
  const guardrail = denyPatternsGuardrail(["secret", "project x"]);

  test.each(["This is secret.", "SECRET plans", "top-secret", "(secret)", "about Project   X today", "project\nx"])(
    "%p fails",
    async (text) => {
      expect(reasonOf(await verdict(guardrail, text))).toMatch(/^matched deny pattern [01] \(literal\)$/);
    },
  );

  test.each([
    "the secretary called",
    "secrets are plural",
    "unsecret",
    "secret_key",
    "projects x",
    "project xylophone",
  ])("%p passes: a word that merely contains the literal", async (text) => {
    expect(await verdict(guardrail, text)).toEqual({ pass: true });
  });

  test("word boundaries hold in any script", async () => {
    const german = denyPatternsGuardrail(["geheim"]);
    expect(await verdict(german, "streng geheim!")).toMatchObject({ pass: false });
    expect(await verdict(german, "geheimnisvoll")).toEqual({ pass: true });
    expect(await verdict(german, "geheimé")).toEqual({ pass: true });
  });

  test("characters that mean something in a regular expression are literal", async () => {
    const guardrail = denyPatternsGuardrail(["c++", "a.b"]);
    expect(await verdict(guardrail, "written in c++ today")).toMatchObject({ pass: false });
    expect(await verdict(guardrail, "see a.b")).toMatchObject({ pass: false });
    expect(await verdict(guardrail, "see axb")).toEqual({ pass: true });
  });
});

describe("regular expressions", () => {
  test("a /body/flags pattern matches with its own flags", async () => {
    const guardrail = denyPatternsGuardrail(["/secret\\d+/i", "/^BEGIN PRIVATE/m"]);
    expect(reasonOf(await verdict(guardrail, "key: SECRET42"))).toBe("matched deny pattern 0 (regular expression)");
    expect(reasonOf(await verdict(guardrail, "x\nBEGIN PRIVATE KEY"))).toBe(
      "matched deny pattern 1 (regular expression)",
    );
    expect(await verdict(guardrail, "key: secret")).toEqual({ pass: true });
    expect(await verdict(guardrail, "x BEGIN PRIVATE KEY")).toEqual({ pass: true });
  });

  test("without the i flag a regular expression is case-sensitive", async () => {
    const guardrail = denyPatternsGuardrail(["/token-[a-f0-9]{8}/"]);
    expect(await verdict(guardrail, "token-deadbeef")).toMatchObject({ pass: false });
    expect(await verdict(guardrail, "TOKEN-DEADBEEF")).toEqual({ pass: true });
  });

  test("a regular expression matches inside words, unlike a literal", async () => {
    const guardrail = denyPatternsGuardrail(["/secret/"]);
    expect(await verdict(guardrail, "the secretary")).toMatchObject({ pass: false });
  });

  test("patterns that do not compile, use g or y, or are blank refuse to build", () => {
    expect(() => denyPatternsGuardrail(["/(unclosed/"])).toThrow(GuardrailConfigError);
    expect(() => denyPatternsGuardrail(["/a/g"])).toThrow(GuardrailConfigError);
    expect(() => denyPatternsGuardrail(["/a/y"])).toThrow(GuardrailConfigError);
    expect(() => denyPatternsGuardrail(["   "])).toThrow(GuardrailConfigError);
  });
});

describe("what is read", () => {
  const guardrail = denyPatternsGuardrail(["forbidden"]);

  test("artifact text parts, URLs and the JSON of data parts count", async () => {
    expect(await verdict(guardrail, textOutput("", artifact({ text: "a forbidden word" })))).toMatchObject({
      pass: false,
    });
    expect(await verdict(guardrail, textOutput("", artifact({ url: "https://x.test/forbidden" })))).toMatchObject({
      pass: false,
    });
    expect(await verdict(guardrail, textOutput("", artifact({ data: { note: "Forbidden" } })))).toMatchObject({
      pass: false,
    });
  });

  test("a match never spans two parts", async () => {
    const guardrail = denyPatternsGuardrail(["/forbidden/"]);
    const split = textOutput("forbid", artifact({ text: "den" }));
    expect(await verdict(guardrail, split)).toEqual({ pass: true });
  });

  test("the reason does not quote the output", async () => {
    expect(reasonOf(await verdict(guardrail, "forbidden"))).not.toContain("forbidden");
  });
});
