// The agent card of a profile: A2A 1.0 shape, a JSON-RPC 1.0, an HTTP+JSON 1.0 and a JSON-RPC 0.3 interface at
// /a2a/<profile>, the profile's skill, both security schemes, nothing internal; served with Cache-Control and an ETag
// and the top-level fields a 0.3 client reads; a profile's extended card.
import { expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { loadConfig, type Profile } from "../../../src/config/index.ts";
import { FINAL_ONLY_NOTE, FINAL_ONLY_TAG } from "../../../src/gateway/agent-card.ts";
import { CardSigner } from "../../../src/gateway/card-signer.ts";
import { AgentCards, buildAgentCard } from "../../../src/gateway/index.ts";
import { type AgentCard, AgentCardSchema } from "../../../src/protocol/index.ts";

const cardShape = TypeCompiler.Compile(AgentCardSchema);

function profile(overrides: Partial<Profile> = {}): Profile {
  const [base] = loadConfig({ env: {} }).profiles;
  return { ...base!, ...overrides };
}

test("a card is a valid A2A 1.0 AgentCard with JSON-RPC 1.0, HTTP+JSON 1.0 and JSON-RPC 0.3 at the profile's path", () => {
  const card = buildAgentCard(profile(), "https://agents.example.com");
  expect(cardShape.Check(card)).toBe(true);
  expect(card.supportedInterfaces).toEqual([
    { url: "https://agents.example.com/a2a/echo", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    { url: "https://agents.example.com/a2a/echo", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    { url: "https://agents.example.com/a2a/echo", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
  ]);
  expect(card.capabilities).toEqual({ streaming: true, pushNotifications: true, extendedAgentCard: false });
  expect(card.securitySchemes).toEqual({
    bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } },
    apiKey: { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } },
  });
  expect(card.securityRequirements).toEqual([
    { schemes: { bearer: { list: [] } } },
    { schemes: { apiKey: { list: [] } } },
  ]);
  expect(card.version).toMatch(/^\d+\.\d+\.\d+/);
});

test("the skill and modes come from the profile; an empty tag list becomes the profile name", () => {
  const card = buildAgentCard(
    profile({
      name: "travel",
      description: "Plans trips.",
      inputModes: ["text/plain", "application/json"],
      outputModes: ["application/json"],
      skill: { id: "plan", name: "Plan", description: "Plans a trip.", tags: [], examples: ["Paris in May"] },
    }),
    "http://localhost:8080",
  );
  expect(card.name).toBe("travel");
  expect(card.description).toBe("Plans trips.");
  expect(card.defaultInputModes).toEqual(["text/plain", "application/json"]);
  expect(card.defaultOutputModes).toEqual(["application/json"]);
  expect(card.skills).toEqual([
    {
      id: "plan",
      name: "Plan",
      description: "Plans a trip.",
      tags: ["travel"],
      examples: ["Paris in May"],
      inputModes: ["text/plain", "application/json"],
      outputModes: ["application/json"],
    },
  ]);
});

test("capabilities.streaming is the profile's streaming setting", () => {
  expect(buildAgentCard(profile({ streaming: false }), "https://a.example").capabilities.streaming).toBe(false);
  expect(buildAgentCard(profile({ streaming: true }), "https://a.example").capabilities.streaming).toBe(true);
});

test("a skill whose output is held back until the full-text check says so: a tag and a note in its description", () => {
  const guardrails = { ...profile().guardrails, denyPatterns: ["internal only"] };
  const skillOf = (overrides: Partial<Profile>) => buildAgentCard(profile(overrides), "https://a.example").skills[0]!;
  for (const held of [{ guardrails }, { fullTextCheck: "required" as const }, { outputSchema: { type: "object" } }]) {
    const skill = skillOf(held);
    expect(skill.tags).toEqual(["test", FINAL_ONLY_TAG]);
    expect(skill.description).toBe(`Answers with the text it got. ${FINAL_ONLY_NOTE}`);
    expect(skill.description).toContain("Output arrives at the end");
  }
  for (const streamed of [{}, { guardrails, fullTextCheck: "off" as const }]) {
    const skill = skillOf(streamed);
    expect(skill.tags).toEqual(["test"]);
    expect(skill.description).toBe("Answers with the text it got.");
  }
  expect(JSON.stringify(skillOf({ guardrails }))).not.toContain("internal only"); // the patterns stay private
});

test("nothing internal is published: handler, identity, workspace, tools, quotas", () => {
  const json = JSON.stringify(
    buildAgentCard(
      profile({
        handler: "secret-handler",
        identity: "svc-account-7",
        workspace: "/srv/private",
        tools: ["shell-tool"],
        quota: { maxActiveTasks: 77, maxStoredBytes: 0 },
      }),
      "https://a.example",
    ),
  );
  for (const internal of ["secret-handler", "svc-account-7", "/srv/private", "shell-tool", "77"])
    expect(json).not.toContain(internal);
});

test("cards are served with Cache-Control and an ETag; a matching If-None-Match is 304", async () => {
  let base = "http://localhost:1";
  const cards = new AgentCards([profile(), profile({ name: "second" })], () => base);
  const nameOf = async (response: Response | undefined) => ((await response?.json()) as AgentCard | undefined)?.name;
  const first = cards.respond(undefined, new Request("http://x/.well-known/agent-card.json"));
  expect(first?.status).toBe(200);
  expect(first?.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
  const etag = first?.headers.get("etag") ?? "";
  expect(etag).toMatch(/^".+"$/);
  expect(await nameOf(first)).toBe("echo");
  const second = cards.respond("second", new Request("http://x/"));
  expect(await nameOf(second)).toBe("second");
  const cached = cards.respond("echo", new Request("http://x/", { headers: { "If-None-Match": `W/${etag}` } }));
  expect(cached?.status).toBe(304);
  expect(cards.respond("missing", new Request("http://x/"))).toBeUndefined();
  base = "http://localhost:2";
  expect(cards.respond("echo", new Request("http://x/"))?.headers.get("etag")).not.toBe(etag);
});

test("a served card adds the 0.3 top-level fields (endpoint, transport, version) to the 1.0 card and nothing else", async () => {
  const cards = new AgentCards([profile()], () => "https://agents.example.com");
  const served = (await cards.respond("echo", new Request("http://x/"))?.json()) as Record<string, unknown>;
  const { url, preferredTransport, protocolVersion, ...v1 } = served;
  expect({ url, preferredTransport, protocolVersion }).toEqual({
    url: "https://agents.example.com/a2a/echo",
    preferredTransport: "JSONRPC",
    protocolVersion: "0.3.0",
  });
  expect(v1).toEqual(JSON.parse(JSON.stringify(buildAgentCard(profile(), "https://agents.example.com"))));
});

test("a profile with an extendedCard: both cards say so; the extended one has its description and skills after the profile's", async () => {
  const extendedCard = {
    description: "Plans trips, for clients.",
    skills: [{ id: "book", name: "Book", description: "Books what was planned.", tags: [] }],
  };
  const travel = profile({ name: "travel", extendedCard });
  const signer = CardSigner.fromPem(
    generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  );
  const cards = new AgentCards([travel, profile()], () => "https://agents.example.com", signer);
  const served = (await cards.respond("travel", new Request("http://x/"))?.json()) as AgentCard & {
    supportsAuthenticatedExtendedCard?: boolean;
  };
  // the public card: the capability (and 0.3's flag), the profile's own description and skill only
  expect(served.capabilities.extendedAgentCard).toBe(true);
  expect(served.supportsAuthenticatedExtendedCard).toBe(true);
  expect(served.description).toBe(travel.description);
  expect(served.skills.map((skill) => skill.id)).toEqual(["echo"]);
  const extended = cards.extended(travel);
  expect(extended && cardShape.Check(extended)).toBe(true);
  expect(extended?.description).toBe("Plans trips, for clients.");
  expect(extended?.skills.map((skill) => [skill.id, skill.tags])).toEqual([
    ["echo", ["test"]],
    ["book", ["travel"]],
  ]);
  expect(extended?.supportedInterfaces).toEqual(served.supportedInterfaces);
  // signed like the public card, over its own content; and kept: the same object on the next call
  expect(extended?.signatures).toHaveLength(1);
  expect(extended?.signatures?.[0]?.signature).not.toBe(served.signatures?.[0]?.signature);
  expect(cards.extended(travel)).toBe(extended as AgentCard);
  // a profile without one: no capability, no 0.3 flag, no extended card
  const plain = (await cards.respond("echo", new Request("http://x/"))?.json()) as Record<string, unknown>;
  expect((plain.capabilities as { extendedAgentCard: boolean }).extendedAgentCard).toBe(false);
  expect("supportsAuthenticatedExtendedCard" in plain).toBe(false);
  expect(cards.extended(profile())).toBeUndefined();
});
