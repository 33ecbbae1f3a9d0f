// A strict ProtoJSON parser of A2A 1.0, built from the proto itself: `buf` compiles test/support/a2a-proto/a2a.proto
// once per test process and @bufbuild/protobuf parses JSON against it, refusing any field the proto does not define,
// any enum name it does not have and any value of the wrong type (as a2a-python's parser does). Tests run response
// bodies and stream events through it; a problem is returned as text, never thrown past the caller.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileRegistry, type FileRegistry, fromBinary, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import type { A2aMethod } from "../../src/protocol/index.ts";

const PROTO = new URL("./a2a-proto/a2a.proto", import.meta.url);
const BUF = new URL("../../node_modules/.bin/buf", import.meta.url);

/** The proto without its service block and google.api annotations (routes and field behaviours, not JSON form). */
export function messagesOnly(proto: string): string {
  let text = proto
    .replace(/^import "google\/api\/[^"]+";\n/gm, "")
    .replace(/ \[\(google\.api\.field_behavior\) = [A-Z_]+\]/g, "");
  const start = text.indexOf("service A2AService {");
  if (start >= 0) {
    let depth = 0;
    let end = text.indexOf("{", start);
    for (; end < text.length; end++) {
      if (text[end] === "{") depth++;
      else if (text[end] === "}" && --depth === 0) break;
    }
    text = text.slice(0, start) + text.slice(end + 1);
  }
  if (text.includes("google.api")) throw new Error("a2a.proto holds a google.api reference this test does not strip");
  return text;
}

/** The A2A 1.0 messages, compiled from the specification's proto (never from the served one). */
let registry: FileRegistry | undefined;

export function a2aRegistry(): FileRegistry {
  if (registry) return registry;
  const dir = mkdtempSync(join(tmpdir(), "a2a-proto-"));
  try {
    writeFileSync(join(dir, "a2a.proto"), messagesOnly(readFileSync(PROTO, "utf8")));
    const out = join(dir, "a2a.binpb");
    const built = spawnSync(BUF.pathname, ["build", dir, "--as-file-descriptor-set", "-o", out], { encoding: "utf8" });
    if (built.status !== 0) throw new Error(`buf build failed: ${built.stderr || built.error?.message}`);
    registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(out)));
    return registry;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The A2A 1.0 messages a response may hold. */
export type A2aMessageName =
  | "AgentCard"
  | "ListTaskPushNotificationConfigsResponse"
  | "ListTasksResponse"
  | "SendMessageResponse"
  | "StreamResponse"
  | "Task"
  | "TaskPushNotificationConfig";

/** What each method's `result` is (an SSE event's result for the streaming methods); null for an empty result. */
export const RESULT_MESSAGES: Readonly<Record<A2aMethod, A2aMessageName | null>> = {
  SendMessage: "SendMessageResponse",
  SendStreamingMessage: "StreamResponse",
  GetTask: "Task",
  ListTasks: "ListTasksResponse",
  CancelTask: "Task",
  SubscribeToTask: "StreamResponse",
  CreateTaskPushNotificationConfig: "TaskPushNotificationConfig",
  GetTaskPushNotificationConfig: "TaskPushNotificationConfig",
  ListTaskPushNotificationConfigs: "ListTaskPushNotificationConfigsResponse",
  DeleteTaskPushNotificationConfig: null,
  GetExtendedAgentCard: "AgentCard",
};

/** Why `json` is not a valid ProtoJSON `lf.a2a.v1.<name>`, or undefined when it is. */
export function protoJsonProblem(name: A2aMessageName, json: unknown): string | undefined {
  const schema = a2aRegistry().getMessage(`lf.a2a.v1.${name}`);
  if (!schema) throw new Error(`lf.a2a.v1.${name} is not in a2a.proto`);
  try {
    fromJson(schema, json as JsonValue, { ignoreUnknownFields: false });
    return undefined;
  } catch (error) {
    return `${name}: ${error instanceof Error ? error.message : String(error)} in ${JSON.stringify(json).slice(0, 300)}`;
  }
}

/** The problem of a method's result: its message for a result, `null` expected for an empty one. */
export function resultProblem(method: A2aMethod, result: unknown): string | undefined {
  const name = RESULT_MESSAGES[method];
  if (name === null) return result === null ? undefined : `${method}: expected a null result`;
  return protoJsonProblem(name, result);
}

/**
 * The top-level fields a served card carries for 0.3 clients: documented, and not AgentCard fields (the fourth only
 * on the card of a profile with an extended card).
 */
export const V03_CARD_FIELDS = [
  "url",
  "preferredTransport",
  "protocolVersion",
  "supportsAuthenticatedExtendedCard",
] as const;

/** The problem of a served card read as an AgentCard, once the 0.3 fields are set aside. */
export function cardProblem(card: unknown): string | undefined {
  if (typeof card !== "object" || card === null) return "AgentCard: not an object";
  const rest = Object.fromEntries(
    Object.entries(card).filter(([key]) => !(V03_CARD_FIELDS as readonly string[]).includes(key)),
  );
  return protoJsonProblem("AgentCard", rest);
}
