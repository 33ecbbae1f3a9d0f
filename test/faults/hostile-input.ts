// A seeded generator of hostile JSON-RPC requests, one class at a time, each with the answer the gateway documents
// for it (docs/gateway.md, Errors): broken JSON, deep nesting, huge strings and arrays, wrong types, unknown fields,
// invalid UTF-8, enormous historyLength/pageSize, forged page tokens and other clients' task ids.

export interface Hostile {
  kind: string;
  body: Uint8Array;
  /** The documented HTTP status and JSON-RPC code(s). */
  status: number;
  codes: readonly number[];
}

export interface HostileContext {
  random: () => number;
  maxBodyBytes: number;
  /** A task of another client (or another profile), which must answer exactly like a missing one. */
  foreignTaskId: string;
}

const encoder = new TextEncoder();
const text = (value: string) => encoder.encode(value);
const envelope = (method: string, params: unknown, id: unknown = 1) =>
  text(JSON.stringify({ jsonrpc: "2.0", id, method, params }));

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function wrongValue(random: () => number): unknown {
  return pick(random, [42, -1, true, null, "x", [], {}, [1, "a"], { nested: { deep: 1 } }, 1e308, "\u0000"]);
}

/** 413 past the body limit, else 200. */
function sized(body: Uint8Array, maxBodyBytes: number): { body: Uint8Array; status: number } {
  return { body, status: body.length > maxBodyBytes ? 413 : 200 };
}

type Make = (c: HostileContext) => Hostile;

const GENERATORS: Record<string, Make> = {
  brokenJson: ({ random }) => {
    const good = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } });
    const cut = good.slice(0, 1 + Math.floor(random() * (good.length - 2)));
    const body = pick(random, [cut, `${good}}`, good.replace(":", ""), "{'a':1}", "NaN", '{"a":01}', "\u0000"]);
    return { kind: "brokenJson", body: text(body), status: 200, codes: [-32700] };
  },
  deepNesting: ({ random, maxBodyBytes }) => {
    const depth = pick(random, [1_000, 10_000, 100_000]);
    const open = pick(random, ["[", '{"a":']);
    const close = open === "[" ? "]" : "}";
    const body = `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","metadata":${open.repeat(depth)}1${close.repeat(depth)}}}`;
    // Beyond the body limit it is 413; within, nesting past server.maxJsonDepth is refused before it is parsed.
    const answer = sized(text(body), maxBodyBytes);
    return { kind: "deepNesting", ...answer, codes: [-32600] };
  },
  hugeString: ({ random, maxBodyBytes }) => {
    const size = Math.floor(maxBodyBytes * (0.5 + random() * 0.45));
    const method = pick(random, ["GetTask", "CancelTask", "GetTaskPushNotificationConfig"]);
    return {
      kind: "hugeString",
      body: envelope(method, { id: "x".repeat(size) }),
      status: 200,
      codes: [-32602, -32001],
    };
  },
  hugeArray: ({ random, maxBodyBytes }) => {
    const count = Math.floor(maxBodyBytes / 4 - 100);
    const parts = Array.from({ length: count }, () => pick(random, [1, 0]));
    const params = { message: { messageId: "m", role: "ROLE_USER", parts } };
    return { kind: "hugeArray", body: envelope("SendMessage", params), status: 200, codes: [-32602] };
  },
  beyondBodyLimit: ({ random, maxBodyBytes }) => {
    const size = maxBodyBytes + 1 + Math.floor(random() * maxBodyBytes);
    const params = { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "y".repeat(size) }] } };
    return { kind: "beyondBodyLimit", body: envelope("SendMessage", params), status: 413, codes: [-32600] };
  },
  wrongTypes: ({ random }) => {
    const bad = (): unknown => pick(random, [42, true, [], [1, "a"], 1.5]);
    const [method, params] = pick(random, [
      ["SendMessage", { message: pick(random, [42, "x", true, []]) }],
      ["SendStreamingMessage", { message: { messageId: bad(), role: "ROLE_USER", parts: [{ text: "a" }] } }],
      [
        "SendMessage",
        { message: { messageId: "m", role: pick(random, [42, "x", "ROLE_AGENT"]), parts: [{ text: "a" }] } },
      ],
      ["SendMessage", { message: { messageId: "m", role: "ROLE_USER", parts: pick(random, [42, "x", [1], [{}]]) } }],
      [pick(random, ["GetTask", "CancelTask", "SubscribeToTask"]), { id: bad() }],
      [
        "ListTasks",
        pick(random, [{ pageSize: pick(random, ["x", true, [], 1.5]) }, { status: pick(random, [42, "NO"]) }]),
      ],
      [
        pick(random, ["GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"]),
        { taskId: bad(), id: bad() },
      ],
      ["CreateTaskPushNotificationConfig", { taskId: "x", url: bad() }],
    ] as const);
    return { kind: "wrongTypes", body: envelope(method, params), status: 200, codes: [-32602] };
  },
  unknownFields: ({ random }) => {
    const method = pick(random, ["GetTask", "CancelTask", "SubscribeToTask"]);
    const params = { id: "x", [`unknown${Math.floor(random() * 1000)}`]: wrongValue(random) };
    // Unknown fields are ignored (as protobuf JSON does): the call proceeds, here to a missing task.
    return { kind: "unknownFields", body: envelope(method, params), status: 200, codes: [-32001] };
  },
  invalidUtf8: ({ random }) => {
    const head = text('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"');
    const bad = pick(random, [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x90, 0x28, 0xbc], [0xed, 0xa0, 0x80]]);
    const tail = text('"}}');
    const body = new Uint8Array([...head, ...bad, ...tail]);
    return { kind: "invalidUtf8", body, status: 200, codes: [-32700] };
  },
  enormousNumbers: ({ random }) => {
    const huge = pick(random, [1e12, 2 ** 53, 1e308, -1, 1.5, 2 ** 31]);
    const [method, params] = pick(random, [
      ["GetTask", { id: "x", historyLength: huge }],
      ["ListTasks", { pageSize: huge }],
      ["ListTasks", { historyLength: huge, pageSize: 0 }],
    ] as const);
    return { kind: "enormousNumbers", body: envelope(method, params), status: 200, codes: [-32602, -32001] };
  },
  forgedPageToken: ({ random }) => {
    const token = pick(random, [
      "x",
      btoa(JSON.stringify({ score: 1, id: "x" })),
      btoa("\u0000".repeat(64)),
      "eyJ9".repeat(20),
      "%00",
      "a".repeat(4096),
      String(Math.floor(random() * 1e9)),
    ]);
    return { kind: "forgedPageToken", body: envelope("ListTasks", { pageToken: token }), status: 200, codes: [-32602] };
  },
  foreignTask: ({ random, foreignTaskId }) => {
    const method = pick(random, ["GetTask", "CancelTask", "SubscribeToTask", "ListTaskPushNotificationConfigs"]);
    const params =
      method === "ListTaskPushNotificationConfigs"
        ? { taskId: foreignTaskId }
        : { id: foreignTaskId, historyLength: 1 };
    return { kind: "foreignTask", body: envelope(method, params), status: 200, codes: [-32001] };
  },
};

export const HOSTILE_KINDS = Object.keys(GENERATORS);

/** The i-th hostile request: classes in turn, their content from the seeded source. */
export function hostile(i: number, context: HostileContext): Hostile {
  const make = GENERATORS[HOSTILE_KINDS[i % HOSTILE_KINDS.length] ?? "brokenJson"] as Make;
  return make(context);
}
