// Which sink a profile gets (the gate when fullTextCheck requires it, else the journal, checked at the end when
// guardrails are configured), and the after-the-fact check of `fullTextCheck: off`.
import { expect, test } from "bun:test";
import { CheckedSink } from "../../../src/actors/checked-sink.ts";
import { createOutputSink, JournalSink, type OutputTarget } from "../../../src/actors/emit-gate.ts";
import { GuardedSink } from "../../../src/actors/guarded-sink.ts";
import { ContentCheckFailure, profileGuardrails } from "../../../src/actors/output-check.ts";
import { loadConfig, type Profile } from "../../../src/config/index.ts";
import {
  denyPatternsGuardrail,
  type Guardrail,
  GuardrailConfigError,
  maxLengthGuardrail,
} from "../../../src/guardrail/index.ts";
import { profileOf, recorder } from "./sink-fixtures.ts";

const deny = denyPatternsGuardrail(["forbidden"]);
const guarded = profileOf({ guardrails: { denyPatterns: ["forbidden"] } });
const COMPLETED = { state: "TASK_STATE_COMPLETED" } as const;

test("createOutputSink: the gate for required and for auto with a guardrail; the journal otherwise", () => {
  const { target } = recorder();
  const sink = (profile: Profile, guardrail: Guardrail | undefined = deny) =>
    createOutputSink(target, { profile, artifactId: "response-1", guardrail });
  expect(sink(guarded)).toBeInstanceOf(GuardedSink);
  expect(sink(profileOf({ fullTextCheck: "required" }), undefined)).toBeInstanceOf(GuardedSink);
  expect(sink(profileOf({ outputSchema: { type: "object" } }))).toBeInstanceOf(GuardedSink);
  expect(createOutputSink(target, { profile: profileOf(), artifactId: "response-1" })).toBeInstanceOf(JournalSink);
  expect(sink(profileOf({ fullTextCheck: "off", guardrails: { denyPatterns: ["forbidden"] } }))).toBeInstanceOf(
    CheckedSink,
  );
});

test("fullTextCheck off: deltas go out as they come; a failing check at the end still fails the leg", async () => {
  const { target, writes } = recorder();
  const off = profileOf({ fullTextCheck: "off", guardrails: { denyPatterns: ["forbidden"] } });
  const signal = new AbortController().signal;
  const sink = new CheckedSink(new JournalSink(target, "response-1"), { profile: off, guardrail: deny, signal });
  await sink.text("a ");
  await sink.text("forbidden ");
  await sink.text("word");
  expect(writes).toHaveLength(2); // streamed already; the newest delta waits to be marked lastChunk
  expect(await sink.finish(COMPLETED).catch((e: unknown) => e)).toBeInstanceOf(ContentCheckFailure);
  expect(writes).toHaveLength(2); // the closing chunk and the COMPLETED status are not written

  const passing = recorder();
  const clean = new CheckedSink(new JournalSink(passing.target, "response-1"), {
    profile: off,
    guardrail: deny,
    signal,
  });
  await clean.text("fine");
  await clean.finish({ state: "TASK_STATE_INPUT_REQUIRED", message: "Anything forbidden?" }).catch(() => {});
  expect(passing.writes).toEqual([]); // the question failed the check: neither the last chunk nor the question
});

test("fullTextCheck off: text past guardrails.maxLength is refused as it comes and never streamed", async () => {
  const { target, writes } = recorder();
  const off = profileOf({ fullTextCheck: "off", guardrails: { maxLength: 8 } });
  const signal = new AbortController().signal;
  const sink = new CheckedSink(new JournalSink(target, "response-1"), {
    profile: off,
    guardrail: maxLengthGuardrail(8),
    signal,
  });
  await sink.text("abcd");
  await sink.text("efgh"); // 8: at the limit, still streamed
  const crossing = await sink.text("i").catch((e: unknown) => e);
  expect(crossing).toBeInstanceOf(ContentCheckFailure);
  expect(await sink.text("j").catch((e: unknown) => e)).toBe(crossing);
  expect(await sink.progress("note").catch((e: unknown) => e)).toBe(crossing);
  expect(await sink.finish(COMPLETED).catch((e: unknown) => e)).toBe(crossing);
  // the first delta went out; the second is the held last chunk, never written; "i" and "j" never reached the journal
  expect(writes).toEqual([
    {
      artifact: { artifactId: "response-1", name: "response", parts: [{ text: "abcd" }] },
      append: false,
      lastChunk: false,
    },
  ]);
});

test("profileGuardrails: one composed guardrail per guarded profile; a bad moderation key variable stops the start", () => {
  const config = loadConfig({ env: {} });
  const plain = config.profiles[0]!;
  const withDeny = { ...guarded, name: "guarded" };
  const built = profileGuardrails({ ...config, profiles: [plain, withDeny] }, { env: {} });
  expect([...built.keys()]).toEqual(["guarded"]);
  const moderated = profileOf({
    name: "moderated",
    guardrails: { moderation: { baseUrl: "http://127.0.0.1:9", apiKeyEnv: "MOD_KEY", timeoutMs: 100 } },
  });
  expect(() => profileGuardrails({ ...config, profiles: [moderated] }, { env: {} })).toThrow(GuardrailConfigError);
  expect(profileGuardrails({ ...config, profiles: [moderated] }, { env: { MOD_KEY: "k" } }).size).toBe(1);
});

test("the journal sink: when the writer refuses every write (a lost lease, the size limit), each call rejects, once", async () => {
  const refused = new Error("refused");
  const target: OutputTarget = { artifact: () => Promise.reject(refused), status: () => Promise.reject(refused) };
  const sink = new JournalSink(target, "response-1");
  // a held delta is written ahead of each call below: both writes reject, and the call reports one of them; neither
  // is left unhandled (which would end the actor's process)
  for (const call of [
    () => sink.artifact({ artifactId: "a", parts: [{ text: "x" }] }),
    () => sink.progress("working"),
    () => sink.finish(COMPLETED),
  ]) {
    await sink.text("held");
    expect(await call().catch((error: unknown) => error)).toBe(refused);
  }
  // give an unhandled rejection the turn it needs to be reported
  await new Promise((resolve) => setTimeout(resolve, 10));
});
